"""Cache keys for answers about a call: the one place that says what an answer depends on.

The rule for every cache in axischeck: a cached answer is reused only when everything that
can change it is in its key, and a value that cannot be keyed makes the answer uncacheable
(never a crash, never a guess). Everything means: the function (held weakly, its code
compared) and every transform option; the argument tree structure and, per array leaf,
what the answer reads of it (shape; dtype, weak type and sharding for a trace); per
non-array leaf its value, as JAX keys static arguments; and, for an answer from a trace,
JAX's trace context (configuration, axis environment). Cached values are handed out as
immutable values or fresh copies, and only verdicts are cached: never an exception that
could have another cause next time (RecursionError, MemoryError).

- `shape_key`: for answers derived from shapes alone (a signature's symbolic prediction,
  the input checks of a level): the argument tree structure and, per leaf, an array's
  shape or the type of anything else. `arrays_key` is the same for a call of arrays by
  position, read without flattening.
- `trace_key`: for answers that came from tracing the user's function, which may read
  anything it is given: per array leaf its shape, dtype and weak type (an abstract value
  or tracer: its whole JAX type, sharding included), per other leaf its type and value
  (immutable builtins only, as JAX keys static arguments by value), and JAX's trace
  context (configuration and axis environment), as JAX keys its own tracing caches.

Keys hold treedefs (as JAX's own caches do) but never arrays. A treedef holds its nodes'
aux data, which may be a user's objects: a cache keeps only a few keys that hold such data
(`holds_user_data`, `BoundedCache.put`).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import Any, cast

import jax
import numpy as np

from ._jax_compat import TRUSTED_ARRAY_TYPES, trace_context
from ._leaves import array_shape

_BY_VALUE = (bool, int, float, complex, str, bytes, type(None))


def arrays_key(args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> Hashable | None:
    """`shape_key`'s twin for the commonest call, arrays passed by position only (an eager
    call, a `predict` of structs): their shapes, read without flattening the arguments.
    Next to JAX's eager work, a flatten and a treedef's hash cost several times what they
    cost in a loop. None for any other call; the tag keeps the two kinds of key apart."""
    if not arrays_by_position(args, kwargs):
        return None
    return ("arrays", tuple([arg.shape for arg in args]))


def arrays_by_position(args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> bool:
    """Whether a call passes arrays (or structs) by position only: nothing to flatten.

    A plain loop: right after JAX's eager call (where this runs), it costs about half
    what `issuperset(map(type, args))` does, whose C paths JAX's call has left cold."""
    for arg in args:
        if type(arg) not in TRUSTED_ARRAY_TYPES:
            return False
    return not kwargs


def draws_key(args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> Hashable | None:
    """The key of a checked call's verdict on its random draws (see `_engine._randomness`),
    which comes from JAX's trace of the function: for concrete arrays by position (the
    commonest eager call, made outside any trace: no axis environment), their shapes and
    dtypes, read without flattening; otherwise `trace_key`, JAX's trace context with it.
    None where a leaf cannot be keyed (the call is checked each time it is traced)."""
    if not kwargs:
        parts = []
        for arg in args:  # one loop: the types read as `arrays_by_position` reads them
            if type(arg) not in TRUSTED_ARRAY_TYPES:
                break
            parts.append((arg.shape, arg.dtype))
        else:
            return ("arrays", tuple(parts))
    try:
        leaves, treedef = jax.tree_util.tree_flatten((args, kwargs))
    except Exception:
        return None
    return trace_key(leaves, treedef)


def shape_key(leaves: list[Any], treedef: Any) -> tuple[Any, tuple[Hashable, ...]]:
    """(treedef, per leaf: shape of an array, `()` for a Python scalar, else its type)."""
    return (treedef, tuple([x.shape if type(x) in TRUSTED_ARRAY_TYPES else _shape_or_type(x) for x in leaves]))


def _shape_or_type(x: Any) -> Hashable:
    if isinstance(x, _BY_VALUE[:4]):
        return ()
    shape = array_shape(x)
    return shape if shape is not None else cast(Hashable, type(x))


def trace_key(leaves: list[Any], treedef: Any) -> Hashable | None:
    """Everything a trace of the function can see of these arguments, or None when some
    leaf cannot be keyed soundly (then the answer is not cached)."""
    parts: list[Hashable] = []
    struct = jax.ShapeDtypeStruct
    for x in leaves:
        part = x if type(x) is struct else _leaf_type(x)  # a struct keys itself (see `_leaf_type`)
        if part is None:
            return None
        parts.append(part)
    return (treedef, tuple(parts), trace_context())


def _leaf_type(x: Any) -> Hashable | None:
    kind = type(x)
    if kind in TRUSTED_ARRAY_TYPES:
        if hasattr(x, "aval"):  # a concrete jax.Array
            return ("array", x.shape, x.dtype, bool(x.weak_type))
        # A ShapeDtypeStruct (shape, dtype, sharding, weak type) keys itself: it equals no
        # tagged tuple, and 16,000 leaves make no 16,000 tuples for the collector.
        return cast(Hashable, x)
    if kind in _BY_VALUE:
        return (kind, x)
    if isinstance(x, np.ndarray | np.generic):
        return ("numpy", x.shape, x.dtype)
    aval = getattr(x, "aval", None)  # a tracer: its JAX type
    if aval is not None and array_shape(x) is not None:
        try:
            hash(aval)
        except Exception:
            return None
        return ("traced", aval)
    return None


def lookup(cache: Any, key: Hashable | None) -> Any:
    """`cache.get(key)`, where comparing keys may run user code (pytree aux data with a
    raising or array-valued `__eq__`): any failure is a miss."""
    if key is None:
        return None
    try:
        return cache.get(key)
    except Exception:
        return None


def same_key(key: Hashable | None, other: Hashable | None) -> bool:
    """`key == other` for two call keys, where comparing them may run user code (pytree aux
    data with a raising or array-valued `__eq__`): any failure, or None, is a difference."""
    if key is None or other is None:
        return False
    try:
        return bool(key == other)
    except Exception:
        return False


def store(cache: Any, key: Hashable | None, value: Any) -> None:
    """`cache.put(key, value)`, skipping keys that cannot be hashed or compared; a key
    whose treedef holds a user's objects is stored as one (see `BoundedCache.put`)."""
    if key is None:
        return
    try:
        cache.put(key, value, holds_user_data=holds_user_data(key))
    except Exception:
        return


_TREEDEF = type(jax.tree_util.tree_structure(0))
_CONTAINERS = (tuple, list, dict, type(None))  # nodes whose aux data JAX makes of the container itself


def holds_user_data(key: Any) -> bool:
    """Whether a key holds a treedef with a node whose aux data is a user's (registered
    classes, dataclasses' static fields): anything but builtin containers, namedtuples
    and ordered or default dicts, whose aux data is their keys or type."""
    todo = [key]
    while todo:
        item = todo.pop()
        if isinstance(item, tuple):
            todo.extend(x for x in item if isinstance(x, (tuple, _TREEDEF)))
        elif isinstance(item, _TREEDEF) and _user_nodes(item):
            return True
    return False


def _user_nodes(treedef: Any) -> bool:
    todo = [treedef]
    while todo:
        node = todo.pop()
        data = node.node_data()
        if data is not None and not issubclass(data[0], _CONTAINERS):
            return True
        todo.extend(node.children())
    return False
