"""Pytree helpers: JAX's strict tree-prefix broadcast, with the mismatch as data."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import jax
import numpy as np
from jax.tree_util import keystr

from ._jax_compat import TRUSTED_ARRAY_TYPES, spec_entries
from ._shape import Shape
from ._text import format_shape


@dataclass(frozen=True, slots=True)
class PrefixMismatch:
    """Why a spec tree is not a prefix of a value tree, at `path` (a keystr)."""

    path: str
    spec_kind: str
    value_kind: str
    detail: str


def broadcast_by_position(spec: Any, full: Any, is_spec_leaf: Callable[[Any], bool]) -> list[Any] | None:
    """Each leaf of `full` paired with the `spec` leaf above it, where containers meet by
    position: a spec container matches any node of `full` with as many children (and the
    same keys where both are dicts), whatever their types. None where even that fails.

    Mirrors `jax._src.api.tuptree_flat`, which `jax.vmap` tries before its strict prefix
    check from jax 0.12.1 on (a tuple may stand for a dict, a list for a tuple; see
    docs/jax-semantics.md#in_axes-and-out_axes-trees). Depth is bounded by the spec, which
    `check_nesting` bounds when the options are made.
    """
    if is_spec_leaf(spec):
        return [spec] * num_leaves(full)
    try:
        spec_children, spec_def = _one_level(spec)
    except Exception:  # not a pytree JAX can flatten: JAX's strict check says why
        return None
    if _is_leaf_node(spec_def):
        return None
    full_children, full_def = _one_level(full)
    if _is_leaf_node(full_def) or len(spec_children) != len(full_children):
        return None
    if type(spec) is dict and type(full) is dict and sorted(spec, key=str) != sorted(full, key=str):
        return None
    out: list[Any] = []
    for s, f in zip(spec_children, full_children, strict=True):
        sub = broadcast_by_position(s, f, is_spec_leaf)
        if sub is None:
            return None
        out.extend(sub)
    return out


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
    try:
        spec_leaves, spec_def = jax.tree_util.tree_flatten(spec, is_leaf=is_spec_leaf)
    except Exception:  # a spec JAX cannot flatten: the node-by-node walk says where
        return walk_prefix(spec, full, is_spec_leaf, path)
    return broadcast_flat(spec_leaves, spec_def, full, lambda: walk_prefix(spec, full, is_spec_leaf, path))


def broadcast_flat(
    spec_leaves: Sequence[Any], spec_def: Any, full: Any, mismatch: Callable[[], list[Any] | PrefixMismatch]
) -> list[Any] | PrefixMismatch:
    """`broadcast_prefix` for a spec already flattened (its leaves and treedef), in a
    number of steps linear in the leaves: JAX cuts `full` at the spec's leaves
    (`flatten_up_to`), and the spec's nodes are checked by rebuilding them around the
    cut subtrees and comparing the structure with `full`'s, node types and metadata
    included. Where they differ, `mismatch()` walks the trees node by node to say how."""
    subtrees: list[Any] = []
    try:
        full_def: Any = jax.tree_util.tree_structure(full)
        if spec_def == full_def:  # the common case: one spec leaf per leaf
            return list(spec_leaves)
        subtrees = spec_def.flatten_up_to(full)
        same = jax.tree_util.tree_structure(spec_def.unflatten(subtrees)) == full_def
    except Exception:  # not a prefix (flatten_up_to raises), or a node that cannot be rebuilt or compared
        same = False
    if not same:
        return mismatch()
    out: list[Any] = []
    for leaf, sub in zip(spec_leaves, subtrees, strict=True):
        count = 1 if type(sub) in _KNOWN_LEAVES else num_leaves(sub)
        if count == 1:
            out.append(leaf)
        elif count:
            out.extend([leaf] * count)
    return out


def walk_prefix(
    spec: Any,
    full: Any,
    is_spec_leaf: Callable[[Any], bool],
    path: str = "",
) -> list[Any] | PrefixMismatch:
    """`broadcast_prefix` one node at a time, to find where and how the trees differ."""
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
        sub = walk_prefix(s, f, is_spec_leaf, path + key)
        if isinstance(sub, PrefixMismatch):
            return sub
        out.extend(sub)
    return out


_KNOWN_LEAVES: frozenset[type] = frozenset({*TRUSTED_ARRAY_TYPES, Shape, bool, int, float, complex, str, np.ndarray})
"""Types JAX flattens as leaves (none of them is a registered pytree node), so that
`labelled_leaves` needs to ask JAX only about other types."""


def labelled_leaves(tree: Any, prefix: str = "") -> tuple[list[str], list[Any]]:
    """Every leaf of `tree` in flatten order, and its label: `prefix + keystr(path)`.

    What `tree_flatten_with_path` and `keystr` give, without a key path per leaf: dicts
    (keys sorted, as JAX sorts them), lists, tuples and None are walked here, one label
    built from its parent's; every other node (namedtuples, OrderedDicts, registered
    classes) is JAX's to flatten, with its own keys. Iterative: depth costs no recursion.
    """
    labels: list[str] = []
    leaves: list[Any] = []
    stack: list[Iterator[tuple[str, Any]]] = [iter(((prefix, tree),))]
    while stack:
        for label, node in stack[-1]:
            kind = type(node)
            if kind in _KNOWN_LEAVES:
                labels.append(label)
                leaves.append(node)
            elif kind is dict:
                try:
                    keys = sorted(node)
                except TypeError:  # keys JAX cannot sort either: its flatten decides
                    _add_by_jax(node, label, labels, leaves)
                    continue
                stack.append(_dict_children(label, node, keys))
                break
            elif kind is list or kind is tuple:
                stack.append(_seq_children(label, node))
                break
            elif node is not None:
                _add_by_jax(node, label, labels, leaves)
        else:
            stack.pop()
    return labels, leaves


def _dict_children(label: str, node: dict[Any, Any], keys: list[Any]) -> Iterator[tuple[str, Any]]:
    return ((f"{label}[{k!r}]", node[k]) for k in keys)


def _seq_children(label: str, node: Sequence[Any]) -> Iterator[tuple[str, Any]]:
    return ((f"{label}[{i}]", child) for i, child in enumerate(node))


def _add_by_jax(node: Any, label: str, labels: list[str], leaves: list[Any]) -> None:
    for path, leaf in jax.tree_util.tree_flatten_with_path(node)[0]:
        labels.append(label + keystr(path))
        leaves.append(leaf)


def leaf_paths(tree: Any) -> list[str]:
    """keystr of every leaf of `tree`, in flatten order."""
    return labelled_leaves(tree)[0]


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


def shapes_text(shapes: Any) -> str:
    """A pytree of shapes as Python prints its containers, each shape as a tuple:
    `(7, 3)`, `((7, 3), (7,))`, `{'a': (7, 3), 'b': [(7,)]}`."""
    if isinstance(shapes, tuple) and all(type(d) is int for d in shapes):
        return format_shape(shapes)
    return str(jax.tree_util.tree_map(lambda s: _Shown(format_shape(s)), shapes))


class _Shown(str):
    """Text that prints as itself inside a container (a str would print quoted)."""

    def __repr__(self) -> str:
        return str.__str__(self)


def hashable(value: Any) -> bool:
    """Whether `value` can key a cache (pmap's static arguments must)."""
    try:
        hash(value)
    except TypeError:
        return False
    return True


def seq_repr(items: Sequence[Any]) -> str:
    return "(" + ", ".join(map(option_repr, items)) + ("," if len(items) == 1 else "") + ")"


def option_repr(value: Any) -> str:
    """A transform option as a user writes it: a spec of one entry is `P('x')` (JAX's repr
    keeps a tuple's trailing comma, `P('x',)`), inside tuples too."""
    if isinstance(value, tuple):
        return seq_repr(value)
    text = repr(value)
    if isinstance(value, jax.sharding.PartitionSpec) and text.endswith(",)"):
        (entry,) = spec_entries(value)
        if text == f"P({entry!r},)":
            return f"P({entry!r})"
    return text


def flat_axes(axes: Any) -> bool:
    """Whether `axes` is an int, None, or a flat tuple of them: the common in_axes/out_axes,
    which need no tree walk (checked when every vmap's options are made: a plain loop,
    which costs less than `issuperset(map(type, axes))` right after JAX's eager call)."""
    if axes is None or type(axes) is int:
        return True
    if type(axes) is not tuple:
        return False
    for axis in axes:
        if axis is not None and type(axis) is not int:
            return False
    return True
