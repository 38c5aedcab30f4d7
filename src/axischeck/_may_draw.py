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

from collections.abc import Callable
from functools import partial
from types import CodeType, FunctionType, MethodType, ModuleType
from typing import Any

import jax
import numpy as np

from ._core._cache import BoundedCache
from ._core._jax_compat import is_key_array, jax_module, random_module

_WORDS = ("random", "rng", "dropout", "sample")
"""Parts of the names (lower case) by which code draws: `jax.random.normal`, `PRNGKey`,
Flax's `rngs=` and `make_rng`, NNX's and Equinox's `Dropout`, NumPyro's `sample`."""

_DEPTH = 3
"""How many calls deep the functions a function reaches are read."""

_MAX_LEAVES = 10_000
"""Past this many leaves, a value is not read: it may hold a key."""


def may_draw(fun: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    """Whether a call of a map of `fun` with these arguments may draw random numbers.

    >>> import jax, jax.numpy as jnp
    >>> may_draw(lambda x: x * 2, (jnp.ones(3),), {})
    False
    >>> may_draw(lambda k: jax.random.normal(k), (jax.random.split(jax.random.key(0), 3),), {})
    True
    """
    try:
        return _holds_key((args, kwargs)) or _reaches(fun, _DEPTH, set())
    except Exception:  # what cannot be read may draw
        return True


def _holds_key(value: Any) -> bool:
    """Whether a pytree holds a PRNG key (a typed key, or a raw `uint32` key)."""
    leaves = jax.tree_util.tree_leaves(value)
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


def _reaches(fun: Any, depth: int, seen: set[int]) -> bool:
    """Whether a callable may reach a key or a sampler: through the wrappers it is made of
    (a `functools.partial`'s bound arguments, a bound method's instance, a callable
    object's fields and its class's `__call__`, `__wrapped__`) to a function, whose code,
    closure and globals are read (see `_function_reaches`)."""
    while id(fun) not in seen:
        seen.add(id(fun))
        kind = type(fun)
        if kind is FunctionType:
            return _function_reaches(fun, depth, seen)
        module = getattr(fun, "__module__", None) if kind is not partial else None
        if isinstance(module, str) and jax_module(module):
            return random_module(module)
        if kind is partial:
            if _holds_key((fun.args, fun.keywords)):
                return True
            fun = fun.func
        elif kind is MethodType:
            if _holds_key(fun.__self__):
                return True
            fun = fun.__func__
        elif getattr(fun, "__wrapped__", None) is not None:
            fun = fun.__wrapped__
        elif isinstance(fun, type):  # a class: what making and calling an instance run
            return any(_reaches(method, depth, seen) for method in _methods(fun, ("__init__", "__call__")))
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


def _function_reaches(fun: FunctionType, depth: int, seen: set[int]) -> bool:
    """Whether a plain function may reach a key or a sampler: JAX's (only `jax.random`'s
    draw), or its code's names (`_names_draws`), the values it closes over and the globals
    its code names (`_value_reaches`), or the function it wraps."""
    module = fun.__module__
    if isinstance(module, str) and jax_module(module):
        return random_module(module)
    code = fun.__code__
    if _names_draws(code):
        return True
    for cell in fun.__closure__ or ():
        try:
            value = cell.cell_contents
        except ValueError:  # an empty cell
            continue
        if _value_reaches(value, depth, seen):
            return True
    glob = fun.__globals__
    for name in _names(code):
        value = glob.get(name, _ABSENT)
        if value is not _ABSENT and _value_reaches(value, depth, seen):
            return True
    wrapped = fun.__dict__.get("__wrapped__")
    return wrapped is not None and _reaches(wrapped, depth, seen)


_ABSENT = object()


def _value_reaches(value: Any, depth: int, seen: set[int]) -> bool:
    """Whether a value a function reads may reach a key or a sampler: a module of
    `jax.random`, a value holding a key, or a callable that may (read `depth` calls deep)."""
    if isinstance(value, ModuleType):
        return random_module(value.__name__)
    if isinstance(value, (int, float, str, bool, bytes, type(None))):
        return False
    if callable(value):
        return depth > 0 and _reaches(value, depth - 1, seen)
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
