"""Facts about the user's function that do not depend on a transform's options: its name
in messages, its parameters, a declared signature fitted to them, whether its annotations
declare any dims, and whether it is itself an axischeck transform. Each is read once per
function (or per code object, for plain functions: a lambda written inline is a new
function with the same code each time)."""

from __future__ import annotations

import site
import sysconfig
import weakref
from abc import ABC, abstractmethod
from collections.abc import Callable
from types import FunctionType
from typing import Any

from .._core._cache import BoundedCache
from .._core._errors import SpecError
from .._core._jax_compat import jax_transform_of
from .._core._keys import lookup, store
from .._core._leaves import parameter_names, plain_function
from .._core._spec import SigCore
from ._signature import Signature


class Nestable(ABC):
    """An axischeck transform, as the engine sees one that another maps: the models the
    wrapping transform maps, unless it defers every answer to JAX."""

    __slots__ = ()

    @property
    @abstractmethod
    def defers_to_jax(self) -> bool:
        """Whether every answer is JAX's own (options axischeck cannot model)."""

    @property
    @abstractmethod
    def models(self) -> Any:
        """The models of this transform (a `_transform_models.Models`, which module
        builds them from this one's: typed here as Any, so neither imports the other's
        types in a circle)."""

    @abstractmethod
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """A transform is called like the function it maps."""


def fn_name(fun: Callable[..., Any]) -> str:
    if type(fun) is FunctionType:
        return fun.__name__
    func = getattr(fun, "func", None)  # functools.partial: name the function it wraps
    if func is not None and callable(func) and getattr(fun, "args", None) is not None:
        return fn_name(func)
    return str(getattr(fun, "__name__", None) or type(fun).__name__)


def library_code(fun: Callable[..., Any]) -> bool:
    """Whether a function is an installed library's code (its file under the interpreter's
    site-packages: a transform Equinox's `BatchNorm` makes inside the user's map), not the
    program's own: a change of that transform's options is not the user's to make."""
    for _ in range(8):  # through wrappers (functools.wraps, partial) to the function they call
        if isinstance(fun, FunctionType) and getattr(fun, "__wrapped__", None) is None:
            return fun.__code__.co_filename.startswith(_LIBRARY_DIRS)
        inner = getattr(fun, "__wrapped__", None) or getattr(fun, "func", None)
        if inner is None:
            return False
        fun = inner
    return False


_LIBRARY_DIRS = tuple(
    {path for key in ("purelib", "platlib") if (path := sysconfig.get_paths().get(key))} | set(site.getsitepackages())
)
"""Where installed libraries live (a tuple, for `str.startswith`)."""


_PARAMETERS: BoundedCache[tuple[tuple[str, ...], str | None, frozenset[str]]] = BoundedCache(1024)
"""Code object -> the parameter names of a plain function with that code."""


_DECLARES_NOTHING: dict[weakref.ref[Callable[..., Any]], bool] = {}
"""A weak reference to a plain function -> whether its annotations declare no dims. The
entry goes with the function (the reference's callback). A dict, not a WeakKeyDictionary,
whose `get` is a Python method: a transform written inline asks at each call, next to
JAX's eager work, where each Python frame counts."""


def annotates_itself(fun: Callable[..., Any]) -> bool:
    """Whether `fun`'s annotations describe the arguments it takes: not where a transform
    made it or a layer under it (JAX's `wraps` copies the mapped function's annotations
    onto what it returns, as an axischeck transform shows them, and `jax.jit`,
    `jax.checkpoint` or a decorator copy them again), whose arguments have other ranks."""
    layer: Any = fun
    for _ in range(_MAX_LAYERS):
        if plain_function(layer):
            return True
        if isinstance(layer, Nestable) or isinstance(getattr(layer, "__func__", None), Nestable):  # or bound to self
            return False
        if jax_transform_of(layer) is not None:
            return False
        layer = getattr(layer, "__wrapped__", None)
        if layer is None:
            return True
    return False  # wrapped deeper than any real decorator stack: not read


_MAX_LAYERS = 32


def declares_nothing(fun: Callable[..., Any]) -> bool:
    """Whether a plain function's annotations declare no dims (none at all, or types like
    `jax.Array` only), read once per function: then a transform of it without a signature
    has nothing to check before JAX runs. Annotations that cannot be read yet (a string
    naming what is defined after the decorator runs) are left to the models: False."""
    known = known_declares_nothing(fun)
    if known is None:
        from .._core._annotations import core_from_annotations

        try:
            known = not annotates_itself(fun) or core_from_annotations(fun) is None
        except Exception:  # annotations or dims that cannot be read: the models say so, not this shortcut
            return False
        _DECLARES_NOTHING[weakref.ref(fun, _forget_verdict)] = known
    return known


def known_declares_nothing(fun: Callable[..., Any]) -> bool | None:
    """`declares_nothing` where it can be told without reading the annotations (when a
    transform is made): True for a plain function without any, the verdict an earlier call
    settled (and kept) otherwise, None when none has been settled or they cannot be read."""
    try:
        if not fun.__annotations__:
            return True
    except Exception:  # annotations that cannot be evaluated yet (deferred, Python 3.14)
        return None
    return _DECLARES_NOTHING.get(weakref.ref(fun))


def verdicts_kept() -> int:
    """How many functions' `declares_nothing` verdicts are kept (they go with the function)."""
    return len(_DECLARES_NOTHING)


def _forget_verdict(gone: weakref.ref[Callable[..., Any]], pop: Any = _DECLARES_NOTHING.pop) -> None:
    pop(gone, None)  # bound early: at interpreter exit this module's names may be gone first


def parameters_of(fun: Callable[..., Any]) -> tuple[list[str], str | None, set[str]] | None:
    """`parameter_names(fun)`, read once per code object for plain functions (whose
    parameters their code alone says: a lambda written inline is a new function with the
    same code each time); each caller gets its own lists."""
    if not plain_function(fun):
        return parameter_names(fun)
    code = fun.__code__
    known = lookup(_PARAMETERS, code)
    if known is None:
        found = parameter_names(fun)
        if found is None:
            return None
        known = (tuple(found[0]), found[1], frozenset(found[2]))
        store(_PARAMETERS, code, known)
    return list(known[0]), known[1], set(known[2])


_DECLARED: BoundedCache[tuple[Any, Any, SigCore]] = BoundedCache(256)
"""(id of a code object, id of a declared signature) -> (that code object, that signature,
the signature checked against a plain function with that code, named after its
parameters). The entry holds both objects, so their ids cannot be reused while it lives."""


def declared_core(fun: Callable[..., Any], signature: Any, name: str | None = None) -> SigCore:
    """The declared per-example signature of `fun`, checked against its parameters (a
    signature must fit the function it is given to: said at decoration, not at the first
    call) and named after them. Checked once per code object and signature object for
    plain functions (a signature text is parsed into one object), so a transform written
    inline costs a lookup that hashes two ints: hashing a code object walks its
    constants and names, dear next to JAX's eager work. Messages name the function
    `name` (by default its own name, read only for a message)."""
    code = fun.__code__ if plain_function(fun) else None
    key = (id(code), id(signature)) if code is not None else None
    known = _DECLARED.get(key)  # a key of two ints (or None): its lookup runs no user code
    if known is not None and known[0] is code and known[1] is signature:
        return known[2]
    core = _fitted(fun, signature, name or fn_name(fun))  # may raise: nothing is stored then
    store(_DECLARED, key, (code, signature, core))
    return core


def _fitted(fun: Callable[..., Any], signature: Any, name: str) -> SigCore:
    """The signature checked against the function's parameters, its inputs named after them."""
    if isinstance(fun, Nestable) and not fun.defers_to_jax:
        raise SpecError(
            f"{name} is already an axischeck transform with its own signature; give signature= to the inner one"
        )
    sig = signature if isinstance(signature, Signature) else Signature(signature)
    if sig.levels:
        raise SpecError(
            "signature= takes a per-example signature; apply vmap through the decorator, not Signature.vmap"
        )
    core = sig.core
    params = parameters_of(fun)
    if params is None:
        return core
    positional, varargs, keywords = params
    names = positional + sorted(keywords - set(positional))
    if core.params is None and len(core.inputs) > len(names) and varargs is None:
        raise SpecError(
            f"the signature {core} declares {len(core.inputs)} inputs but {name} has only"
            f" {len(names)} parameters ({', '.join(names)})"
        )
    if core.params is not None:
        unknown = [p for p in core.params if p not in set(names) | keywords]
        if unknown and params[2] is not None and varargs is None:
            raise SpecError(f"the signature names parameters {unknown} that {name} does not have")
    elif varargs is None:
        core = core.with_params(names)
    return core
