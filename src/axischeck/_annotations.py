"""Signatures read from a function's annotations.

`Annotated[jax.Array, "a b"]` carries dims in its metadata (a pytree of dim strings
for pytree parameters: `Annotated[dict, {"W": "o i", "b": "o"}]`). jaxtyping's
`Float[Array, "a b"]` is read through its `dim_str` attribute when jaxtyping is in
use; axischeck never imports jaxtyping itself.
"""

from __future__ import annotations

import ast
import inspect
import typing
from collections.abc import Callable
from typing import Any

from ._dims import ArraySpec, parse_array_spec
from ._errors import SpecError
from ._spec import SigCore, SpecTree, spec_tree

_NOTHING = object()


_JAXTYPING_NAMES = frozenset(
    "Shaped Float Int Integer UInt Bool Complex Inexact Num Real Key Float16 Float32 Float64"
    " BFloat16 Int8 Int16 Int32 Int64 UInt8 UInt16 UInt32 UInt64 Complex64 Complex128".split()
)


def _dims_of_text(text: str, where: str) -> Any:
    """Dims from an annotation we could not resolve (a string under PEP 563).

    Parsed with `ast`, never evaluated: `Annotated[X, "a b"]`, `Annotated[X, {...}]`
    (literals only), jaxtyping's `Float[Array, "a b"]`, and `tuple[...]` of those.
    """
    try:
        node = ast.parse(text, mode="eval").body
    except SyntaxError:
        return _NOTHING
    return _dims_of_node(node, where)


def _name_of(node: ast.expr) -> str:
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else ""


def _dims_of_node(node: ast.expr, where: str) -> Any:
    if not isinstance(node, ast.Subscript):
        return _NOTHING
    name = _name_of(node.value)
    parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
    if name == "Annotated":
        for meta in parts[1:]:
            try:
                value = ast.literal_eval(meta)
            except ValueError:
                continue
            if isinstance(value, (str, dict, list, tuple)):
                return value
        return _NOTHING
    if name in _JAXTYPING_NAMES and len(parts) == 2 and isinstance(parts[1], ast.Constant):
        if isinstance(parts[1].value, str):
            return _jaxtyping_dims(parts[1].value, where)
    if name in ("tuple", "Tuple") and parts and not (isinstance(parts[-1], ast.Constant) and parts[-1].value is Ellipsis):
        found = [_dims_of_node(p, where) for p in parts]
        if any(f is not _NOTHING for f in found):
            return tuple(None if f is _NOTHING else f for f in found)
    return _NOTHING


def _dims_of(hint: Any, where: str) -> Any:
    """The spec pytree an annotation declares, or _NOTHING."""
    if isinstance(hint, str):
        return _dims_of_text(hint, where)
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
    except Exception:  # unresolvable names (locals under PEP 563): read them as text
        hints = dict(getattr(fn, "__annotations__", None) or {})
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
