"""Everything that depends on the JAX version, in one place (tested: jax 0.10.2).

axischeck mirrors JAX's semantics from its own rules (see shared/jax_semantics.md);
only these few facts are read from JAX itself.
"""

from __future__ import annotations

import functools
import inspect
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

OLDEST_TESTED = (0, 10, 2)

try:  # jax's concrete array class; importing it costs nothing once jax is imported
    from jax._src.array import ArrayImpl as _ArrayImpl

    _array_impl: tuple[type, ...] = (_ArrayImpl,)
except ImportError:  # pragma: no cover - a future layout: the general path still works
    _array_impl = ()

TRUSTED_ARRAY_TYPES: frozenset[type] = frozenset({*_array_impl, jax.ShapeDtypeStruct})
"""Types whose `.shape` JAX guarantees to be a tuple of ints >= 0 with a valid dtype."""


@functools.lru_cache(maxsize=256)
def array_type(kind: Any) -> bool:
    """Whether JAX takes values of this type as arrays: jax and numpy arrays and scalars,
    tracers, `ShapeDtypeStruct`s (abstract arrays, for prediction), and `__jax_array__`."""
    return issubclass(kind, (np.ndarray, np.generic, jax.Array, jax.ShapeDtypeStruct)) or hasattr(kind, "__jax_array__")


def backend_initialized() -> bool:
    """Whether JAX has created its backends (after which XLA_FLAGS are no longer read)."""
    try:
        from jax._src import xla_bridge
    except ImportError:  # pragma: no cover - a future layout: assume the worst
        return True
    return bool(getattr(xla_bridge, "_backends", True))


def canonical_dtype(dtype: Any) -> Any:
    """The dtype JAX computes with (float64 -> float32 without x64); typed PRNG keys and
    other extended dtypes are kept as they are."""
    if jnp.issubdtype(dtype, jax.dtypes.extended):
        return dtype
    return jax.dtypes.canonicalize_dtype(dtype)


@functools.lru_cache(maxsize=256)
def valid_dtype(dtype: Any) -> bool:
    """Whether arrays of `dtype` are JAX values (str, object, datetime, void are not)."""
    try:
        if jnp.issubdtype(dtype, jax.dtypes.extended):  # PRNG keys and friends
            return True
        import jax.extend.core as jex_core  # imported on first use: it costs ~30 ms

        return bool(jex_core.valid_jaxtype(np.zeros((), dtype)))
    except Exception:
        return False


INFER_SPECS: Any = inspect.signature(jax.shard_map).parameters["in_specs"].default
"""`jax.shard_map`'s default `in_specs` (`Infer`, not public in 0.10.2): take each argument's
own sharding, which only Explicit mesh axes have."""


def vmap_shmap_error_enabled() -> bool:
    """JAX refuses a vmap spmd_axis_name named by an inner shard_map, unless configured not to."""
    return not bool(getattr(jax.config, "jax_disable_vmap_shmap_error", False))


def spec_entries(spec: Any) -> tuple[Any, ...]:
    """A PartitionSpec's per-dim entries (iterating a spec with `unreduced=` raises)."""
    return tuple(spec.partitions)


def type_sharding(x: Any) -> Any:
    """The sharding in `x`'s JAX type (an array, a struct, a tracer under jit), whose spec
    names only Explicit mesh axes. None for a value JAX does not type as an array."""
    try:
        aval = jax.typeof(x)  # a struct whose sharding cannot hold its shape raises ValueError
    except TypeError:  # not a JAX value (a str)
        return None
    return getattr(aval, "sharding", None)


def type_spec(x: Any) -> Any:
    """The PartitionSpec of `type_sharding(x)`, or None."""
    return getattr(type_sharding(x), "spec", None)
