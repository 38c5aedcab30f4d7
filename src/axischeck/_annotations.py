"""Signatures read from a function's annotations.

`Annotated[jax.Array, "a b"]` carries dims in its metadata (a pytree of dim strings
for pytree parameters: `Annotated[dict, {"W": "o i", "b": "o"}]`). jaxtyping's
`Float[Array, "a b"]` is read through its `dim_str` attribute when jaxtyping is in
use; axischeck never imports jaxtyping itself.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable
from typing import Any

from ._dims import ArraySpec, parse_array_spec
from ._errors import SpecError
from ._spec import SigCore, SpecTree, spec_tree

_NOTHING = object()


def _dims_of(hint: Any, where: str) -> Any:
    """The spec pytree an annotation declares, or _NOTHING."""
    if typing.get_origin(hint) is typing.Annotated:
        for meta in hint.__metadata__:
            if isinstance(meta, (str, ArraySpec, dict, list, tuple)):
                return meta
        return _NOTHING
    dim_str = getattr(hint, "dim_str", None)
    if isinstance(dim_str, str) and type(hint).__module__.startswith("jaxtyping"):
        return _jaxtyping_dims(dim_str, where)
    if typing.get_origin(hint) is tuple:
        parts = typing.get_args(hint)
        if parts and parts[-1] is not Ellipsis:
            found = [_dims_of(p, where) for p in parts]
            if any(f is not _NOTHING for f in found):
                return tuple(None if f is _NOTHING else f for f in found)
    return _NOTHING


def _jaxtyping_dims(dim_str: str, where: str) -> ArraySpec:
    tokens = dim_str.split()
    cleaned = []
    for tok in tokens:
        if "=" in tok or any(op in tok for op in "+-/()"):
            raise SpecError(
                f"jaxtyping dimension {tok!r} in {where} is an expression; axischeck reads names,"
                " integers, '_', '#name', '*name' and '...'"
            )
        cleaned.append(tok)
    return parse_array_spec(" ".join(cleaned))


def core_from_annotations(fn: Callable[..., Any]) -> SigCore | None:
    """The signature declared by `fn`'s annotations, or None if none declares dims."""
    try:
        hints = typing.get_type_hints(fn, include_extras=True)
    except Exception:  # unresolvable forward references: fall back to raw objects
        hints = dict(getattr(fn, "__annotations__", {}) or {})
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return None
    names: list[str] = []
    inputs: list[SpecTree] = []
    found = False
    for name, p in params.items():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        dims = _dims_of(hints.get(name, _NOTHING), f"parameter {name!r}")
        found |= dims is not _NOTHING
        names.append(name)
        inputs.append(spec_tree(None if dims is _NOTHING else dims, f"parameter {name!r}"))
    out = _dims_of(hints.get("return", _NOTHING), "the return annotation")
    if not found and out is _NOTHING:
        return None
    output = None if out is _NOTHING else spec_tree(out, "the return annotation")
    return SigCore(tuple(inputs), output, tuple(names))
