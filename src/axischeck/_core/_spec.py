"""Signature cores: the per-example spec of every input and output, as pytrees.

A `SpecTree` is a pytree whose leaves are `ArraySpec`s. It is matched against an
argument (or output) as a tree prefix, like `in_axes`: one spec string covers a
whole subtree, and `None` (or `"..."`) leaves a subtree unchecked.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import jax

from ._dims import ANY, ArraySpec, parse_array_spec, parse_signature_text
from ._errors import SpecError
from ._text import short_repr
from ._trees import MAX_DEPTH


class Verbatim:
    """Renders as its text inside a container repr (spec leaves, code for pytree nodes)."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text


@dataclass(frozen=True, slots=True)
class SpecTree:
    """A frozen pytree of `ArraySpec` leaves (hashable)."""

    treedef: Any
    leaves: tuple[ArraySpec, ...]

    @property
    def value(self) -> Any:
        return jax.tree_util.tree_unflatten(self.treedef, self.leaves)

    @property
    def is_leaf(self) -> bool:
        return bool(self.treedef.num_nodes == 1 and self.treedef.num_leaves == 1)

    def __str__(self) -> str:
        if self.is_leaf:
            return str(self.leaves[0])
        texts = [Verbatim(str(leaf)) for leaf in self.leaves]
        value = jax.tree_util.tree_unflatten(self.treedef, texts)
        try:
            return repr(value)
        except Exception:  # a node type whose own repr fails (a user's class): axischeck's rendering
            return _tree_text(self.treedef, value, texts)


def _tree_text(treedef: Any, value: Any, texts: list[Verbatim]) -> str:
    """`Type(path: dims, ...)`: the root's type name and each leaf by its pytree path, for a
    tree whose own repr cannot be used; it never calls a repr of the user's."""
    try:
        kind = treedef.node_data()[0].__name__
    except Exception:  # no node data (a leaf), or a type without a plain name
        kind = "pytree"
    try:
        paths = [jax.tree_util.keystr(path) for path, _ in jax.tree_util.tree_flatten_with_path(value)[0]]
        body = ", ".join(f"{path}: {text}" for path, text in zip(paths, texts, strict=True))
    except Exception:  # the node's key rule fails: the leaves in order
        body = ", ".join(map(str, texts))
    return f"{kind}({body})"


def _is_spec_leaf(x: object) -> bool:
    return x is None or isinstance(x, (str, ArraySpec))


def _children(node: Any, what: str) -> list[Any] | None:
    """The children of a pytree node (None for a leaf), read one level at a time."""
    if _is_spec_leaf(node):
        return None
    kind = type(node)
    if kind is tuple or kind is list:
        return list(node)
    if kind is dict:
        return list(node.values())
    try:  # namedtuples, OrderedDicts, registered custom nodes: JAX's own one-level flatten
        children = jax.tree_util.tree_leaves(node, is_leaf=lambda y: y is not node)
    except Exception as err:  # a user's flatten rule or key ordering failed
        raise SpecError(f"{what} cannot be read as a pytree: {type(err).__name__}: {err}") from None
    if len(children) == 1 and children[0] is node:  # not a pytree node: a leaf
        return None
    return children


def check_tree_shape(value: Any, what: str) -> None:
    """Refuse cyclic or absurdly deep pytrees before JAX's flatten recurses into them.

    Iterative, so a 10,000-deep value costs no Python recursion; the limit is the
    same `MAX_DEPTH` as for axes. (A RecursionError inside jaxlib's C++ flatten can
    leave the interpreter's recursion counter raised, so it must never be provoked.)
    """
    stack: list[tuple[Any, int, frozenset[int]]] = [(value, 0, frozenset())]
    while stack:
        node, depth, path = stack.pop()
        children = _children(node, what)
        if children is None:
            continue
        if id(node) in path:
            raise SpecError(f"{what} contains itself (a cyclic container)")
        if depth >= MAX_DEPTH:
            raise SpecError(f"{what} is nested more than {MAX_DEPTH} levels deep")
        inner = path | {id(node)}
        # Spec leaves (dim strings above all) have no children: only nodes are stacked.
        stack.extend((child, depth + 1, inner) for child in children if not _is_spec_leaf(child))


def spec_tree(value: Any, what: str) -> SpecTree:
    """Read a pytree of dim strings (or `ArraySpec`s, or None for unchecked)."""
    where = f"the signature for {what}"
    check_tree_shape(value, where)
    try:
        leaves, treedef = jax.tree_util.tree_flatten(value, is_leaf=_is_spec_leaf)
    except Exception as err:  # e.g. dict keys that cannot be sorted
        raise SpecError(f"{where} cannot be read as a pytree: {type(err).__name__}: {err}") from None
    specs = []
    parsed: dict[str, ArraySpec] = {}  # a text repeated over many leaves is parsed once
    for leaf in leaves:
        if leaf is None:
            specs.append(ANY)
        elif isinstance(leaf, ArraySpec):
            specs.append(leaf)
        elif isinstance(leaf, str):
            text = str.__str__(leaf)  # an exact str: a subclass's __eq__/__hash__ never runs
            spec = parsed.get(text)
            if spec is None:
                spec = parsed[text] = parse_array_spec(text)
            specs.append(spec)
        else:
            raise SpecError(
                f"{where} must be dim strings like 'a b' in a pytree,"
                f" but it holds {short_repr(leaf)} of type {type(leaf).__name__}"
            )
    tree = SpecTree(treedef, tuple(specs))
    try:
        hash(tree)  # signatures key caches: a structure that cannot be hashed is refused now
    except Exception as err:  # unhashable node metadata of a custom pytree
        raise SpecError(f"{where} has unhashable pytree structure: {type(err).__name__}: {err}") from None
    return tree


@dataclass(frozen=True, slots=True)
class SigCore:
    """Per-example inputs (one `SpecTree` per parameter) and output (None: undeclared).

    `params` names the parameter of each input when known (from annotations or the
    decorated function); otherwise inputs are matched by position only.
    """

    inputs: tuple[SpecTree, ...]
    output: SpecTree | None
    params: tuple[str, ...] | None = None
    _symbols: frozenset[str] | None = field(default=None, init=False, repr=False, compare=False)
    _text: str | None = field(default=None, init=False, repr=False, compare=False)

    @property
    def symbols(self) -> frozenset[str]:
        """Every dimension name the signature uses (worked out once: a parsed signature is
        shared by every transform that writes it)."""
        found = self._symbols
        if found is None:
            trees = [*self.inputs, *([self.output] if self.output is not None else [])]
            specs = {leaf for tree in trees for leaf in tree.leaves}  # repeated dim strings share a spec
            found = frozenset[str]().union(*(spec.symbols for spec in specs))
            object.__setattr__(self, "_symbols", found)  # a memo of the frozen fields
        return found

    def with_params(self, params: Sequence[str]) -> SigCore:
        if self.params is not None:
            return self
        named = SigCore(self.inputs, self.output, tuple(params[: len(self.inputs)]))
        object.__setattr__(named, "_symbols", self.symbols)  # the same dims: the same names, worked out once
        return named

    def __str__(self) -> str:
        """Written once: an error's headline names the whole signature, and a tree of
        16,000 leaves makes 16,000 objects to write it."""
        text = self._text
        if text is None:
            text = self._written()
            object.__setattr__(self, "_text", text)  # a memo of the frozen fields
        return text

    def _written(self) -> str:
        ins = ", ".join(str(t) for t in self.inputs)
        if self.output is None:
            return ins
        value = self.output.value
        if type(value) is tuple and value and all(isinstance(v, ArraySpec) for v in value):
            out = ", ".join(str(v) for v in value)  # several outputs, as the gufunc form writes them
        else:
            out = str(self.output)
        return f"{ins} -> {out}"


_RETURN = "return"


def core_from_value(spec: Any, output: Any = None, *, has_output: bool = False) -> SigCore:
    """Build a `SigCore` from any accepted signature form (see `Signature`)."""
    if isinstance(spec, str):
        if has_output:
            raise SpecError("give the output inside the signature string ('...->...'), not separately")
        ins, outs = parse_signature_text(spec)
        inputs = tuple(SpecTree(jax.tree_util.tree_structure(0), (s,)) for s in ins)
        if outs is None:
            return SigCore(inputs, None)
        out_value: Any = outs[0] if len(outs) == 1 else tuple(outs)
        return SigCore(inputs, spec_tree(out_value, "the output"))
    if isinstance(spec, Mapping):
        entries = _mapping_entries(spec)
        params = tuple(k for k in entries if k != _RETURN)
        inputs = tuple(spec_tree(entries[k], f"parameter {k!r}") for k in params)
        out_tree = None
        if _RETURN in entries:
            out_tree = spec_tree(entries[_RETURN], "the output")
        if has_output:
            if out_tree is not None:
                raise SpecError("the output is given twice: as 'return' and as output=")
            out_tree = spec_tree(output, "the output")
        return SigCore(inputs, out_tree, params)
    if isinstance(spec, (tuple, list)):
        inputs = tuple(spec_tree(s, f"input {i}") for i, s in enumerate(spec))
        return SigCore(inputs, spec_tree(output, "the output") if has_output else None)
    raise SpecError(
        "a signature is a string like '(a,b),(b,c)->(a,c)', a tuple of per-argument dim"
        f" strings, or a dict of parameter names; got {type(spec).__name__}: {short_repr(spec)}"
    )


def _mapping_entries(spec: Mapping[Any, Any]) -> dict[str, Any]:
    """A signature dict's entries, keys as exact `str`s (no user `__eq__`/`__hash__` runs later)."""
    try:
        items = list(spec.items())
    except Exception as err:  # a user Mapping that cannot be read
        raise SpecError(f"the signature dict cannot be read: {type(err).__name__}: {err}") from None
    entries: dict[str, Any] = {}
    for key, value in items:
        if not isinstance(key, str):
            raise SpecError(
                "a signature dict maps parameter names (str) to dim strings,"
                f" but it has the key {short_repr(key)} of type {type(key).__name__}"
            )
        entries[str.__str__(key)] = value
    return entries
