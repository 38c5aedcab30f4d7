"""Whether a map's call may draw random numbers at all, read from the function and the
call's arguments without running either: the check of the draws (`_draws`) records JAX's
trace of a call only where it may, and every other call is JAX's own.

A call may draw where a leaf of its arguments is a PRNG key, or where its function reaches
a key or a sampler: its code names JAX's random module or a word the libraries draw by
(`dropout`, `rngs`, `make_rng`, `sample`), or it reaches, through the globals and the
closure it reads (a few calls deep), a function or module of `jax.random`, a value holding
a key, or a function whose code does. What cannot be read may draw. JAX's own functions
(but for `jax.random`'s) draw nothing, and are not read.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from functools import partial
from types import CodeType, FunctionType, MethodType, ModuleType
from typing import Any

import jax
import numpy as np

from ._core._cache import BoundedCache
from ._core._jax_compat import is_key_array, jax_module, random_module
from ._core._keys import arrays_by_position

_WORDS = ("random", "rng", "dropout", "sample")
"""Parts of the names (lower case) by which code draws: `jax.random.normal`, `PRNGKey`,
Flax's `rngs=` and `make_rng`, NNX's and Equinox's `Dropout`, NumPyro's `sample`."""

_DEPTH = 3
"""How many calls deep the functions a function reaches are read."""

_MAX_LEAVES = 10_000
"""Past this many leaves, a value is not read: it may hold a key."""


def may_draw(
    fun: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any], call_key: Hashable | None = None
) -> bool:
    """Whether a call of a map of `fun` with these arguments may draw random numbers.
    `call_key`: the call's `draws_key`, whose dtypes answer for arrays passed by position
    without reading them again.

    >>> import jax, jax.numpy as jnp
    >>> may_draw(lambda x: x * 2, (jnp.ones(3),), {})
    False
    >>> may_draw(lambda k: jax.random.normal(k), (jax.random.split(jax.random.key(0), 3),), {})
    True
    """
    try:
        return _call_holds_key(args, kwargs, call_key) or _function_may_draw(fun)
    except Exception:  # what cannot be read may draw
        return True


@dataclass(slots=True)
class _Trail:
    """What one reading of a function read: each global, closure cell, code and wrapped
    function it looked at, with the value it found (`reads`), and whether that is all it
    read (`sure`: only plain functions, modules and scalars; a value's contents, an
    object's fields or a class's methods may change without a trace here)."""

    reads: list[tuple[str, Any, Any, Any]] = field(default_factory=list)
    sure: bool = True

    def still_holds(self) -> bool:
        """Whether every value read is still the one found (by identity)."""
        for kind, holder, name, value in self.reads:
            if kind == "global":
                now = holder.get(name, _ABSENT)
            elif kind == "cell":
                try:
                    now = holder.cell_contents
                except ValueError:
                    now = _ABSENT
            else:  # "code" or "wrapped": of a function, held weakly
                fun = holder()
                if fun is None:
                    return False
                now = fun.__code__ if kind == "code" else fun.__dict__.get("__wrapped__")
            if now is not value:
                return False
        return True


_VERDICTS: weakref.WeakKeyDictionary[FunctionType, tuple[bool, _Trail]] = weakref.WeakKeyDictionary()
"""Per plain function: whether it may draw, and what that verdict was read from. A
transform made anew at each call of the same function (`ax.vmap(f)(x)` written inline)
asks again: the verdict stands while every value it was read from is the same."""


def _function_may_draw(fun: Any) -> bool:
    if type(fun) is FunctionType:
        kept = _VERDICTS.get(fun)
        if kept is not None and kept[1].still_holds():
            return kept[0]
    trail = _Trail()
    reaches = _reaches(fun, _DEPTH, set(), trail)
    # Kept weakly by the function: not where what it read holds the function itself (a
    # recursive function), which would keep it alive.
    if type(fun) is FunctionType and trail.sure and not any(value is fun for *_, value in trail.reads):
        _VERDICTS[fun] = (reaches, trail)
    return reaches


def _call_holds_key(args: tuple[Any, ...], kwargs: dict[str, Any], call_key: Hashable | None = None) -> bool:
    """Whether a call's arguments hold a PRNG key; arrays passed by position (the
    commonest call) are read as they are, without a flatten, or from their dtypes in
    the call's key: none but a typed key's or uint32 can be a key's."""
    if type(call_key) is tuple and call_key[0] == "arrays":
        if all(isinstance(dtype, np.dtype) and dtype != np.uint32 for _, dtype in call_key[1]):
            return False
    return _leaves_hold_key(args if arrays_by_position(args, kwargs) else jax.tree_util.tree_leaves((args, kwargs)))


def _holds_key(value: Any) -> bool:
    """Whether a pytree holds a PRNG key."""
    return _leaves_hold_key(jax.tree_util.tree_leaves(value))


def _leaves_hold_key(leaves: Sequence[Any]) -> bool:
    """Whether a leaf is a PRNG key (a typed key, or a raw `uint32` key); past
    `_MAX_LEAVES`, the leaves are not read: they may hold one."""
    if len(leaves) > _MAX_LEAVES:
        return True
    for leaf in leaves:
        dtype = getattr(leaf, "dtype", None)
        if dtype is None:
            continue
        if isinstance(dtype, np.dtype) and dtype != np.uint32:
            continue  # a key is a typed key (not a NumPy dtype) or uint32
        if is_key_array(leaf):
            return True
    return False


def _reaches(fun: Any, depth: int, seen: set[int], trail: _Trail) -> bool:
    """Whether a callable may reach a key or a sampler: through the wrappers it is made of
    (a `functools.partial`'s bound arguments, a bound method's instance, a callable
    object's fields and its class's `__call__`, `__wrapped__`) to a function, whose code,
    closure and globals are read (see `_function_reaches`)."""
    while id(fun) not in seen:
        seen.add(id(fun))
        kind = type(fun)
        if kind is FunctionType:
            return _function_reaches(fun, depth, seen, trail)
        module = getattr(fun, "__module__", None) if kind is not partial else None
        if isinstance(module, str) and jax_module(module):
            return random_module(module)
        trail.sure = False  # a wrapper, a class or an object: what it holds may change
        if kind is partial:
            if _call_holds_key(fun.args, fun.keywords):
                return True
            fun = fun.func
        elif kind is MethodType:
            if _holds_key(fun.__self__):
                return True
            fun = fun.__func__
        elif getattr(fun, "__wrapped__", None) is not None:
            fun = fun.__wrapped__
        elif isinstance(fun, type):  # a class: what making and calling an instance run
            return any(_reaches(method, depth, seen, trail) for method in _methods(fun, ("__init__", "__call__")))
        else:  # a callable object: its fields, and what its class runs
            if _holds_key(fun):
                return True
            call = _methods(kind, ("__call__",))
            if not call:
                return False  # a builtin (a ufunc, an operator): it draws nothing
            fun = call[0]
    return False


def _methods(kind: type, names: tuple[str, ...]) -> list[FunctionType]:
    """The methods of these names a class's instances run, where defined in Python
    (read from the classes' own dicts: no descriptor runs)."""
    found: list[FunctionType] = []
    for name in names:
        for klass in kind.__mro__:
            method = klass.__dict__.get(name)
            if method is not None:
                if type(method) is FunctionType:
                    found.append(method)
                break
    return found


def _function_reaches(fun: FunctionType, depth: int, seen: set[int], trail: _Trail) -> bool:
    """Whether a plain function may reach a key or a sampler: JAX's (only `jax.random`'s
    draw), or its code's names (`_names_draws`), the values it closes over and the globals
    its code names (`_value_reaches`), or the function it wraps."""
    module = fun.__module__
    if isinstance(module, str) and jax_module(module):
        return random_module(module)
    code = fun.__code__
    trail.reads.append(("code", weakref.ref(fun), None, code))
    if _names_draws(code):
        return True
    for cell in fun.__closure__ or ():
        try:
            value = cell.cell_contents
        except ValueError:  # an empty cell
            trail.reads.append(("cell", cell, None, _ABSENT))
            continue
        trail.reads.append(("cell", cell, None, value))
        if _value_reaches(value, depth, seen, trail):
            return True
    glob = fun.__globals__
    for name in _names(code):
        value = glob.get(name, _ABSENT)
        trail.reads.append(("global", glob, name, value))
        if value is not _ABSENT and _value_reaches(value, depth, seen, trail):
            return True
    wrapped = fun.__dict__.get("__wrapped__")
    trail.reads.append(("wrapped", weakref.ref(fun), None, wrapped))
    return wrapped is not None and _reaches(wrapped, depth, seen, trail)


_ABSENT = object()


def _value_reaches(value: Any, depth: int, seen: set[int], trail: _Trail) -> bool:
    """Whether a value a function reads may reach a key or a sampler: a module of
    `jax.random`, a value holding a key, or a callable that may (read `depth` calls deep)."""
    if isinstance(value, ModuleType):
        return random_module(value.__name__)
    if isinstance(value, (int, float, str, bool, bytes, type(None))):
        return False
    if callable(value):
        return depth > 0 and _reaches(value, depth - 1, seen, trail)
    trail.sure = False  # a container's contents may change
    return _holds_key(value)


_NAMES: BoundedCache[tuple[bool, tuple[str, ...]]] = BoundedCache(1024)
"""Per code object: whether its names say it draws, and the names it reads (its own and
those of the functions defined in it). A code object's names never change."""


def _names_draws(code: CodeType) -> bool:
    return _read(code)[0]


def _names(code: CodeType) -> tuple[str, ...]:
    return _read(code)[1]


def _read(code: CodeType) -> tuple[bool, tuple[str, ...]]:
    found = _NAMES.get(code)
    if found is None:
        names: dict[str, None] = {}
        _collect(code, names)
        draws = any(word in name.lower() for name in names for word in _WORDS)
        found = (draws, tuple(names))
        _NAMES.put(code, found)
    return found


def _collect(code: CodeType, names: dict[str, None]) -> None:
    """The names a code object reads (globals and attributes), with those of the code
    objects defined in it (nested functions, lambdas, comprehensions)."""
    for name in code.co_names:
        names[name] = None
    for const in code.co_consts:
        if isinstance(const, CodeType):
            _collect(const, names)
