"""Signature cores: the per-example spec of every input and output, as pytrees.

A `SpecTree` is a pytree whose leaves are `ArraySpec`s. It is matched against an
argument (or output) as a tree prefix, like `in_axes`: one spec string covers a
whole subtree, and `None` (or `"..."`) leaves a subtree unchecked.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import jax

from ._dims import ANY, ArraySpec, parse_array_spec, parse_signature_text
from ._errors import SpecError
from ._trees import check_nesting


class _Text:
    """Renders as its text inside a container repr."""

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
        texts = [_Text(str(leaf)) for leaf in self.leaves]
        return repr(jax.tree_util.tree_unflatten(self.treedef, texts))


def _is_spec_leaf(x: object) -> bool:
    return x is None or isinstance(x, (str, ArraySpec))


def spec_tree(value: Any, what: str) -> SpecTree:
    """Read a pytree of dim strings (or `ArraySpec`s, or None for unchecked)."""
    check_nesting(value, f"the signature for {what}")
    try:
        leaves, treedef = jax.tree_util.tree_flatten(value, is_leaf=_is_spec_leaf)
    except (ValueError, TypeError) as err:  # e.g. dict keys that cannot be sorted
        raise SpecError(f"the signature for {what} cannot be read as a pytree: {err}") from None
    specs = []
    for leaf in leaves:
        if leaf is None:
            specs.append(ANY)
        elif isinstance(leaf, ArraySpec):
            specs.append(leaf)
        elif isinstance(leaf, str):
            specs.append(parse_array_spec(leaf))
        else:
            raise SpecError(
                f"the signature for {what} must be dim strings like 'a b' in a pytree,"
                f" but it holds {leaf!r} of type {type(leaf).__name__}"
            )
    return SpecTree(treedef, tuple(specs))


@dataclass(frozen=True, slots=True)
class SigCore:
    """Per-example inputs (one `SpecTree` per parameter) and output (None: undeclared).

    `params` names the parameter of each input when known (from annotations or the
    decorated function); otherwise inputs are matched by position only.
    """

    inputs: tuple[SpecTree, ...]
    output: SpecTree | None
    params: tuple[str, ...] | None = None

    @property
    def symbols(self) -> frozenset[str]:
        trees = list(self.inputs) + ([self.output] if self.output is not None else [])
        out: frozenset[str] = frozenset()
        for t in trees:
            for leaf in t.leaves:
                out |= leaf.symbols
        return out

    def with_params(self, params: Sequence[str]) -> SigCore:
        if self.params is not None:
            return self
        return SigCore(self.inputs, self.output, tuple(params[: len(self.inputs)]))

    def __str__(self) -> str:
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
        params = tuple(k for k in spec if k != _RETURN)
        if not all(isinstance(k, str) for k in params):
            raise SpecError("a signature dict maps parameter names (str) to dim strings")
        inputs = tuple(spec_tree(spec[k], f"parameter {k!r}") for k in params)
        out_tree = None
        if _RETURN in spec:
            out_tree = spec_tree(spec[_RETURN], "the output")
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
        f" strings, or a dict of parameter names; got {type(spec).__name__}: {spec!r}"
    )
