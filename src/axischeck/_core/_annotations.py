"""Signatures read from a function's annotations.

`Annotated[jax.Array, "a b"]` carries dims in its metadata (a pytree of dim strings
for pytree parameters: `Annotated[dict, {"W": "o i", "b": "o"}]`). jaxtyping's
`Float[Array, "a b"]` is read through its `dim_str` attribute when jaxtyping is in
use (also `Float[ArrayLike, ...]`, which jaxtyping builds as a Union, and
`PyTree[Float[Array, ...]]`, whose dims then cover every leaf); axischeck never
imports jaxtyping itself.
"""

from __future__ import annotations

import inspect
import types
import typing
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from ._annotation_text import NOTHING, Refused, dims_of_text, jaxtyping_dims
from ._cache import BoundedCache
from ._dims import ArraySpec
from ._errors import AxisCheckError, SpecError
from ._leaves import plain_function
from ._spec import SigCore, SpecTree, spec_tree


def _dims_of(hint: Any, where: str, output: bool = False) -> Any:
    """The spec pytree an annotation declares, or NOTHING. Of an `output`, a jaxtyping
    `PyTree[...]` declares nothing: its dims cover every leaf of a structure it does not
    say, which the output's trace gives (for an argument, the argument says it)."""
    if isinstance(hint, str):
        return dims_of_text(hint, where, output)
    if typing.get_origin(hint) is typing.Annotated:
        for meta in hint.__metadata__:
            if isinstance(meta, (str, ArraySpec, dict, list, tuple)):
                return meta
        return NOTHING
    if _is_jaxtyping(hint):
        dim_str = getattr(hint, "dim_str", None)
        if isinstance(dim_str, str):
            return jaxtyping_dims(dim_str, where)
        leaf: Any = getattr(hint, "leaftype", None)  # jaxtyping.PyTree[leaftype, "T"]: dims for every leaf
        if output:
            return NOTHING
        leaf_dims = getattr(leaf, "dim_str", None)
        if _is_jaxtyping(leaf) and isinstance(leaf_dims, str):
            return jaxtyping_dims(leaf_dims, where, in_pytree=True)
        if typing.get_origin(leaf) in (typing.Union, types.UnionType):
            return _union_dims(typing.get_args(leaf), where, in_pytree=True)
        return NOTHING
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        return _union_dims(typing.get_args(hint), where)
    if typing.get_origin(hint) is tuple:
        parts = typing.get_args(hint)
        if parts and parts[-1] is not Ellipsis:
            found = [_dims_of(p, where, output) for p in parts]
            if any(f is not NOTHING for f in found):
                return tuple(None if f is NOTHING else f for f in found)
    return NOTHING


def _is_jaxtyping(hint: Any) -> bool:
    module = getattr(type(hint), "__module__", None)
    return isinstance(module, str) and module.startswith("jaxtyping")


_SCALAR_TYPES = (bool, int, float, complex, np.generic)


def _union_dims(members: tuple[Any, ...], where: str, *, in_pytree: bool = False) -> Any:
    """jaxtyping builds `Float[ArrayLike, "a b"]` as a Union of one array type per array
    kind, all with the same dims (plus Python and NumPy scalar types when the dims are
    `""`): those dims. Any other Union (`X | None` above all) declares nothing we check."""
    dim_strs = {getattr(m, "dim_str", None) for m in members if _is_jaxtyping(m)}
    if len(dim_strs) != 1:
        return NOTHING
    (dim_str,) = dim_strs
    if not isinstance(dim_str, str):
        return NOTHING
    others = [m for m in members if not _is_jaxtyping(m)]
    scalars_ok = not dim_str.split()  # a scalar leaf fits only scalar dims
    if others and not (scalars_ok and all(isinstance(m, type) and issubclass(m, _SCALAR_TYPES) for m in others)):
        return NOTHING
    return jaxtyping_dims(dim_str, where, in_pytree=in_pytree)


def check_text_dims(fn: Callable[..., Any]) -> None:
    """Refuses, at decoration, dims in annotations written as text that no reader accepts
    (`Float[Array, '²']`: not a name, not an ASCII size, not an expression), as the same
    text in `signature=` is refused. Text is parsed, never evaluated; dims axischeck merely
    does not model (`'n+1'`) are left to the first call, which traces the function."""
    for name, value in _raw_annotations(fn).items():
        if isinstance(value, str) and "[" in value:  # dims are written in a subscript: `Float[Array, "n"]`
            where = "the return annotation" if name == "return" else f"parameter {name!r}"
            refusal = _refusal_of_text(value, where)
            if refusal is not None:
                raise SpecError(*refusal[:1], hint=refusal[1])


def _refusal_of_text(text: str, where: str) -> tuple[str, str | None] | None:
    """The problem and fix `check_text_dims` raises for one annotation's text, or None:
    read once per text (construction runs this for every transform of an annotated
    function). Only short texts are kept: a long one could meet the recursion limit,
    an accident, not a verdict."""
    key = (text, where)
    known = _TEXT_VERDICTS.get(key)
    if known is not None:
        return known[0]
    try:
        dims_of_text(text, where)
        verdict: tuple[str, str | None] | None = None
    except Refused as err:
        verdict = (err.problem, err.hint)
    except SpecError:
        verdict = None
    if len(text) < 1000:
        _TEXT_VERDICTS.put(key, (verdict,))
    return verdict


_TEXT_VERDICTS: BoundedCache[tuple[tuple[str, str | None] | None]] = BoundedCache(1024)
"""(annotation text, where it is) -> what `check_text_dims` says of it."""


def core_from_annotations(fn: Callable[..., Any]) -> SigCore | None:
    """The signature declared by `fn`'s annotations, or None if none declares dims.

    Each annotation is resolved on its own, with `typing.get_type_hints` semantics (so a
    string annotation is evaluated in `fn`'s globals, as under PEP 563). One that cannot
    be resolved (a name defined later or only locally, or any error while evaluating it)
    is read without evaluation instead: as text with `ast` for a string, structurally
    otherwise; what still declares no dims leaves that parameter unchecked. Malformed
    dims that *are* declared raise `SpecError`.
    """
    if plain_function(fn) and not fn.__annotations__:
        return None  # a plain function without annotations (a lambda): nothing to read
    try:
        params = inspect.signature(fn).parameters
    except Exception:  # no signature (some builtins), or a __signature__ that raises
        return None
    raw = _raw_annotations(fn)
    globalns = _globals_of(fn)
    names: list[str] = []
    inputs: list[SpecTree] = []
    found = False
    for name, p in params.items():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        where = f"parameter {name!r}"
        dims = _declared(raw, name, globalns, where)
        found |= dims is not NOTHING
        names.append(name)
        inputs.append(spec_tree(None if dims is NOTHING else dims, where))
    out = _declared(raw, "return", globalns, "the return annotation")
    if not found and out is NOTHING:
        return None
    output = None if out is NOTHING else spec_tree(out, "the return annotation")
    return SigCore(tuple(inputs), output, tuple(names))


def _raw_annotations(fn: Any) -> dict[str, Any]:
    """`fn.__annotations__` as a plain dict with str keys, or {} when it cannot be read
    (a function's own dict as it is: read only, never changed)."""
    try:
        raw = getattr(fn, "__annotations__", None)
        if type(raw) is dict and _STR.issuperset(map(type, raw)):  # a function's own: as it is
            return raw
        items = list(raw.items()) if isinstance(raw, Mapping) else []
    except Exception:  # a property that raises, a Mapping that cannot be iterated
        return {}
    return {str.__str__(k): v for k, v in items if isinstance(k, str)}


_STR = frozenset({str})


def _globals_of(fn: Any) -> dict[str, Any]:
    """The globals string annotations are evaluated in: those of the innermost `__wrapped__`
    function, as `typing.get_type_hints` finds them."""
    try:
        inner = inspect.unwrap(fn)
        ns = getattr(inner, "__globals__", None)
    except Exception:  # a __wrapped__ cycle (ValueError), or attributes that raise
        return {}
    return ns if isinstance(ns, dict) else {}


def _resolved(raw: dict[str, Any], name: str, globalns: dict[str, Any]) -> Any:
    """One annotation evaluated as `typing.get_type_hints` would, or as written when it
    cannot be (then text under PEP 563)."""
    value = raw[name]
    try:
        holder = types.SimpleNamespace(__annotations__={name: value})
        return typing.get_type_hints(holder, globalns, None, include_extras=True)[name]
    except Exception:  # unresolvable: read it without evaluating
        return value


def _declared(raw: dict[str, Any], name: str, globalns: dict[str, Any], where: str) -> Any:
    """The dims one annotation declares, or NOTHING; see `core_from_annotations`."""
    if name not in raw:
        return NOTHING
    hint = _resolved(raw, name, globalns)
    try:
        return _dims_of(hint, where, output=name == "return")
    except AxisCheckError:
        raise
    except Exception:  # an annotation object that breaks on inspection: declares nothing
        return NOTHING


# The dtype a plain tuple of ints stands for when jaxtyping names a kind but not a width:
# JAX's default for that kind (without x64).
_KIND_DEFAULTS = ("float32", "int32", "uint32", "bool", "complex64")


def declared_dtypes(fn: Callable[..., Any]) -> dict[str, Any]:
    """Parameter name -> the dtype its jaxtyping annotation implies (`Float[Array, ...]`:
    float32, `Int`: int32, `Key`: a typed PRNG key, `UInt8`: uint8, ...), for `predict`
    to give a plain tuple of ints the dtype the function expects. Parameters whose
    annotations name no dtype (or several widths and no default) are left out."""
    try:
        params = inspect.signature(fn).parameters
    except Exception:
        return {}
    raw = _raw_annotations(fn)
    globalns = _globals_of(fn)
    found: dict[str, Any] = {}
    for name in params:
        if name not in raw:
            continue
        hint = _resolved(raw, name, globalns)
        members = typing.get_args(hint) if typing.get_origin(hint) in (typing.Union, types.UnionType) else (hint,)
        kinds = {getattr(getattr(m, "dtype", None), "dtypes", None) for m in members if _is_jaxtyping(m)}
        kinds.discard(None)
        if len(kinds) != 1:
            continue
        (names,) = kinds
        if not isinstance(names, tuple):  # Shaped: any dtype
            continue
        dtype = _one_dtype(names)
        if dtype is not None:
            found[name] = dtype
    return found


def _one_dtype(names: tuple[str, ...]) -> Any:
    if "prng_key" in names:
        from ._jax_compat import default_key_dtype

        return default_key_dtype()
    chosen = names[0] if len(names) == 1 else next((d for d in _KIND_DEFAULTS if d in names), None)
    try:
        return None if chosen is None else np.dtype(chosen)
    except TypeError:  # a width numpy does not know (float8 and friends)
        return None
