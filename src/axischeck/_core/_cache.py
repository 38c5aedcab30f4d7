"""Bounded, thread-safe caches: a map, and a weak table of values per function."""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Hashable
from functools import partial
from types import FunctionType, MethodType
from typing import Any, Generic, TypeVar

V = TypeVar("V")

MAX_HOLDING_USER_DATA = 4
"""How many entries of one cache may hold a user's objects in their keys (see `BoundedCache.put`)."""


class BoundedCache(Generic[V]):
    """A map holding at most `maxsize` entries, evicting the oldest first, and at most
    `MAX_HOLDING_USER_DATA` of them whose keys hold a user's objects (see `put`).

    Reads take no lock (a single dict lookup is atomic in CPython, with or without
    the GIL), so a hit costs one lookup; writes and evictions are serialised.
    """

    __slots__ = ("_data", "_holding", "_lock", "get", "maxsize")

    def __init__(self, maxsize: int = 256) -> None:
        self.maxsize = maxsize
        self._data: dict[Hashable, V] = {}
        self._holding: dict[Hashable, None] = {}  # the keys holding user objects, oldest first
        self._lock = threading.Lock()
        self.get: Callable[[Hashable], V | None] = self._data.get  # the dict's own: a hit is one C call

    def put(self, key: Hashable, value: V, *, holds_user_data: bool = False) -> None:
        """Store `value`. A key that holds a user's objects (the aux data of a registered
        pytree node: a model's static fields, which may be large and compared by identity,
        so that every step's fresh model is a new key) keeps them alive while it is stored:
        only the newest few such keys are kept, so caching never holds more of a user's
        data than a handful of calls passed."""
        with self._lock:
            self._data[key] = value
            if holds_user_data:
                self._holding[key] = None
                while len(self._holding) > MAX_HOLDING_USER_DATA:
                    oldest = next(iter(self._holding))
                    del self._holding[oldest]
                    self._data.pop(oldest, None)
            while len(self._data) > self.maxsize:
                oldest = next(iter(self._data))
                del self._data[oldest]
                self._holding.pop(oldest, None)

    def values(self) -> tuple[V, ...]:
        """The values held now (a snapshot)."""
        with self._lock:
            return tuple(self._data.values())

    def __len__(self) -> int:
        return len(self._data)


class PerFunction(Generic[V]):
    """Values kept per (function, options), shared by every transform built from them,
    held no longer than the function lives.

    Functions are matched by identity (never by a user `__eq__`) and held weakly: an
    entry goes when its function is collected. A function whose code is replaced (as
    IPython's autoreload does; see `code_of`) is a new function: what was kept for its
    old code is dropped. Functions that cannot be weakly referenced, and options that cannot be
    hashed, are not shared (`get_or_make` then makes a fresh value). Each function keeps
    at most `per_function` option sets.
    """

    __slots__ = ("_entries", "_gone", "_lock", "per_function")

    def __init__(self, per_function: int = 32) -> None:
        self.per_function = per_function
        # id(function) -> (a weak reference to it, its code when the entry was made, the table)
        self._entries: dict[int, tuple[weakref.ref[Any], object, dict[Hashable, V]]] = {}
        self._lock = threading.Lock()
        # Functions collected since the last store. A weakref callback can run inside any
        # allocation, even one made while this thread holds `_lock` (the garbage collector
        # runs it there), so it only notes the death; stores drop the entries.
        self._gone: list[tuple[int, weakref.ref[Any]]] = []

    def get_or_make(self, fun: object, options: Hashable | None, make: Callable[[], V]) -> V:
        if options is None:
            return make()
        try:
            hit = self.get(fun, options)
        except Exception:  # an option whose __eq__ misbehaves: do not share
            return make()
        if hit is not None:
            return hit
        code = code_of(fun)
        value = make()  # may raise: nothing is stored then
        if not same_code(code_of(fun), code):  # the function's code was replaced meanwhile: share nothing
            return value
        try:
            ref = weakref.ref(fun, self._forget(id(fun)))
            hash(options)
        except TypeError:
            return value
        with self._lock:
            self._drop_gone()
            entry = self._entries.get(id(fun))
            if entry is None or entry[0]() is not fun or not same_code(entry[1], code):
                entry = (ref, code, {})
                self._entries[id(fun)] = entry
            table = entry[2]
            table[options] = value
            while len(table) > self.per_function:
                del table[next(iter(table))]
        return value

    def get(self, fun: object, options: Hashable) -> V | None:
        """The value kept for `fun` (with its current code) and these options, or None. Runs
        the options' `__eq__` where it must compare them (a caller sharing nothing on an
        exception catches it)."""
        entry = self._entries.get(id(fun))
        if entry is None or entry[0]() is not fun:
            return None
        code = entry[1]
        if not runs_code(fun, code):
            return None  # its code was replaced
        return entry[2].get(options)

    def _forget(self, key: int) -> Callable[[weakref.ref[Any]], None]:
        def forget(ref: weakref.ref[Any]) -> None:
            self._gone.append((key, ref))  # no lock: see __init__ (list.append is atomic)

        return forget

    def _drop_gone(self) -> None:
        """Drop the entries of collected functions (with `_lock` held)."""
        while self._gone:
            key, ref = self._gone.pop()
            entry = self._entries.get(key)
            if entry is not None and entry[0] is ref:
                del self._entries[key]

    def __len__(self) -> int:
        with self._lock:
            self._drop_gone()
            return len(self._entries)


def code_of(fun: object) -> object:
    """What names the code that runs when `fun` is called, or None if nothing does: a plain
    function's code object; for wrappers, the codes along the chain of wrapped functions
    (a tuple: compare with `same_code`). It looks through `functools.partial`, bound
    methods, functions that set `__wrapped__` (`functools.wraps`), axischeck's own
    transforms (`Wrapper`) and objects whose class defines `__call__`, reading only what
    those types hold, so no user code runs.
    What it names changes when IPython's autoreload replaces code in place."""
    codes: list[object] = []
    for _ in range(_UNWRAP_LIMIT):
        kind = type(fun)
        if kind is FunctionType:
            codes.append(fun.__code__)  # type: ignore[attr-defined]
            fun = fun.__dict__.get("__wrapped__")
            if fun is None:
                break
        elif kind is partial:
            fun = fun.func  # type: ignore[attr-defined]
        elif kind is MethodType:
            fun = fun.__func__  # type: ignore[attr-defined]
        elif issubclass(kind, Wrapper):
            fun = fun.__dict__.get("__wrapped__")
        else:
            fun = _class_call(kind)  # an object whose class defines `__call__` in Python
            if fun is None:
                break
    if not codes:
        return None
    return codes[0] if len(codes) == 1 else tuple(codes)


def _class_call(kind: type) -> object:
    """The `__call__` that `kind`'s instances run, if a plain function: read from the
    classes' own dicts, so no descriptor runs. Autoreload replaces its code in place too."""
    for klass in kind.__mro__:
        call = klass.__dict__.get("__call__")
        if call is not None:
            return call if type(call) is FunctionType else None
    return None


def same_code(code: object, other: object) -> bool:
    """Whether two `code_of` answers name the same code objects: by identity, item by item
    for a wrapper's (a new tuple each time). Code objects compare equal by value, even
    compiled anew from another file: autoreload's new code may equal the old."""
    if code is other:
        return True
    if type(code) is not tuple or type(other) is not tuple or len(code) != len(other):
        return False
    return all(a is b for a, b in zip(code, other, strict=True))


def runs_code(fun: object, code: object) -> bool:
    """Whether `fun` still runs `code` (a `code_of` answer): for a plain function, one
    identity comparison."""
    return (type(fun) is FunctionType and code is fun.__code__) or same_code(code, code_of(fun))


_UNWRAP_LIMIT = 16
"""How many wrappers `code_of` looks through (a cycle of `__wrapped__` ends there)."""


class Wrapper:
    """A callable that runs the function it holds as `__wrapped__` (an instance attribute):
    `code_of` looks through it."""

    __slots__ = ()


class WeakCallable:
    """Calls a function through a weak reference, so a cached model that must call it
    (to trace it) does not keep it alive. `__wrapped__` lets `inspect.signature` see it."""

    __slots__ = ("__weakref__", "_ref")

    def __init__(self, fun: Callable[..., Any]) -> None:
        self._ref = weakref.ref(fun)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        fun = self._ref()
        if fun is None:  # pragma: no cover - a transform holds its function while it lives
            raise ReferenceError("the mapped function no longer exists")
        return fun(*args, **kwargs)

    @property
    def __wrapped__(self) -> Any:
        return self._ref()


def held_function(fun: Callable[..., Any]) -> Any:
    """The function `fun` calls: the referent of a `WeakCallable` (None once it is gone),
    else `fun` itself, so that both key the same records of it."""
    return fun._ref() if isinstance(fun, WeakCallable) else fun


def held_weakly(fun: Callable[..., Any]) -> Callable[..., Any]:
    """`fun` behind a weak reference where it can be weakly referenced, else `fun`."""
    try:
        return WeakCallable(fun)
    except TypeError:
        return fun
