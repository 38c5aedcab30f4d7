"""Pytree helpers: JAX's strict tree-prefix broadcast, with the mismatch as data."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import jax
from jax.tree_util import keystr


@dataclass(frozen=True, slots=True)
class PrefixMismatch:
    """Why a spec tree is not a prefix of a value tree, at `path` (a keystr)."""

    path: str
    spec_kind: str
    value_kind: str
    detail: str


def _kind(x: Any) -> str:
    children, treedef = _one_level(x)
    if _is_leaf_node(treedef):
        return "a leaf" if x is not None else "None"
    if isinstance(x, dict):
        return f"a dict with keys {sorted(x, key=str)}"
    if isinstance(x, (tuple, list)) and not hasattr(x, "_fields"):
        return f"a {type(x).__name__} of length {len(x)}"
    return f"a {type(x).__name__}"


def _one_level(x: Any) -> tuple[list[Any], Any]:
    return jax.tree_util.tree_flatten(x, is_leaf=lambda y: y is not x)


def _is_leaf_node(treedef: Any) -> bool:
    return bool(treedef.num_nodes == 1 and treedef.num_leaves == 1)


def _child_keys(x: Any) -> list[str]:
    with_path, _ = jax.tree_util.tree_flatten_with_path(x, is_leaf=lambda y: y is not x)
    return [keystr(path) for path, _ in with_path]


def num_leaves(tree: Any) -> int:
    return len(jax.tree_util.tree_leaves(tree))


def broadcast_prefix(
    spec: Any,
    full: Any,
    is_spec_leaf: Callable[[Any], bool],
    path: str = "",
) -> list[Any] | PrefixMismatch:
    """Each leaf of `full` paired with the `spec` leaf above it, in flatten order.

    Mirrors `jax._src.api_util.flatten_axes`: a spec leaf covers a whole subtree
    (`None` subtrees of `full` have no leaves); otherwise node types, lengths, dict
    key sets and pytree metadata must agree exactly (a list is not a tuple, a
    namedtuple is not a tuple). Returns the mismatch instead of raising.
    """
    if is_spec_leaf(spec):
        return [spec] * num_leaves(full)
    spec_children, spec_def = _one_level(spec)
    if _is_leaf_node(spec_def):
        return [spec] * num_leaves(full)
    full_children, full_def = _one_level(full)
    if type(spec) is not type(full) or _is_leaf_node(full_def):
        return PrefixMismatch(path, _kind(spec), _kind(full), "different types")
    if len(spec_children) != len(full_children) or spec_def.node_data() != full_def.node_data():
        detail = "different lengths" if isinstance(spec, (list, tuple)) else "different keys"
        if isinstance(spec, dict):
            missing = sorted(set(full) - set(spec), key=str)
            extra = sorted(set(spec) - set(full), key=str)
            detail = f"keys missing from the spec: {missing}; keys only in the spec: {extra}"
        return PrefixMismatch(path, _kind(spec), _kind(full), detail)
    out: list[Any] = []
    for key, s, f in zip(_child_keys(full), spec_children, full_children, strict=True):
        sub = broadcast_prefix(s, f, is_spec_leaf, path + key)
        if isinstance(sub, PrefixMismatch):
            return sub
        out.extend(sub)
    return out


def leaf_paths(tree: Any) -> list[str]:
    """keystr of every leaf of `tree`, in flatten order."""
    with_path, _ = jax.tree_util.tree_flatten_with_path(tree)
    return [keystr(path) for path, _ in with_path]


def flatten_axes_spec(spec: Any) -> tuple[list[Any], Any]:
    """Flatten an in_axes/out_axes value, keeping `None` as a leaf (as JAX does)."""
    return jax.tree_util.tree_flatten(spec, is_leaf=lambda x: x is None)


MAX_DEPTH = 64


def check_nesting(value: Any, what: str) -> None:
    """Reject cyclic or absurdly deep containers before JAX's flatten recurses into them.

    (A RecursionError inside jaxlib's C++ flatten can leave the interpreter's
    recursion counter raised, so it must never be provoked.)
    """
    from ._errors import SpecError

    stack: list[tuple[Any, int, frozenset[int]]] = [(value, 0, frozenset())]
    while stack:
        node, depth, seen = stack.pop()
        if not isinstance(node, (list, tuple, dict)):
            continue
        if id(node) in seen:
            raise SpecError(f"{what} contains itself (a cyclic container)")
        if depth > MAX_DEPTH:
            raise SpecError(f"{what} is nested more than {MAX_DEPTH} levels deep")
        children = node.values() if isinstance(node, dict) else node
        inner = seen | {id(node)}
        stack.extend((child, depth + 1, inner) for child in children)


def short_repr(value: Any) -> str:
    """A repr bounded in length, for values echoed in messages."""
    import reprlib

    r = reprlib.Repr()
    r.maxstring, r.maxother, r.maxlist, r.maxtuple, r.maxdict, r.maxlevel = 60, 60, 8, 8, 8, 4
    return r.repr(value)


def seq_repr(items: Sequence[Any]) -> str:
    return "(" + ", ".join(map(repr, items)) + ("," if len(items) == 1 else "") + ")"


def flat_axes(axes: Any) -> bool:
    """Whether `axes` is an int, None, or a flat tuple of them: the common in_axes/out_axes,
    which need no tree walk (checked first on the hot path of every construction)."""
    if axes is None or type(axes) is int:
        return True
    return type(axes) is tuple and all(a is None or type(a) is int for a in axes)
