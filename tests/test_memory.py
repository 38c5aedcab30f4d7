"""Bounded memory: every cache stays at its bound, and nothing the user made is kept alive.

The prediction cache stays at its bound under 100,000 distinct shapes and memory stays flat
once it is full; the fast path's plans are bounded too; a transform, its function and what
was kept for the function die with their last reference; and a fresh pytree metadata object
each step (a new cache key each call) is not kept for every step.
"""

from __future__ import annotations

import gc
import tracemalloc
import weakref

import jax
import jax.numpy as jnp

import axischeck as ax
from axischeck._core._keys import arrays_key
from jax_oracle import const


def test_prediction_cache_stays_bounded_under_100k_distinct_shapes() -> None:
    f = ax.vmap(lambda x: x, signature="(n)->(n)")
    cache = f._predictor._predictions
    first = f.predict((1, 1))
    for i in range(100_000):
        b, n = divmod(i, 317)
        shape = (b + 1, n + 1)
        pred = f.predict(shape)
        if i % 4999 == 0:
            assert pred.shapes == shape
            assert len(cache) <= cache.maxsize
    assert len(cache) == cache.maxsize
    plans = f._predictor._plans  # the fast path's compiled plans
    assert len(plans) == 1  # one call structure, one plan
    newest = arrays_key((jax.ShapeDtypeStruct(shape, jnp.float32),), {})  # a struct by position
    oldest = arrays_key((jax.ShapeDtypeStruct((1, 1), jnp.float32),), {})
    assert cache.get(newest) is not None  # the newest entries are kept...
    assert cache.get(oldest) is None  # ...and the oldest evicted
    assert f.predict((1, 1)) == first


def test_memory_is_flat_once_the_cache_is_full() -> None:
    f = ax.vmap(lambda x: x, signature="(n)->(n)")
    shapes = ((i % 500 + 1, i // 500 + 1) for i in range(10**9))
    tracemalloc.start()
    try:
        for _ in range(3000):
            f.predict(next(shapes))
        gc.collect()
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(5000):
            f.predict(next(shapes))
        gc.collect()
        after = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert after - before < 64 * 1024, f"grew by {after - before} bytes over 5000 new shapes"


def test_plan_cache_is_bounded_under_many_call_structures() -> None:
    f = ax.vmap(const, signature=ax.Signature((None,), output=""))
    for i in range(600):
        assert f.predict({f"k{i}": (2,)}).shapes == (2,)  # a new pytree structure each time
    plans = getattr(f, "_plans", None)
    assert plans is None or len(plans) <= plans.maxsize
    assert len(f._predictor._predictions) <= f._predictor._predictions.maxsize


def test_decorated_functions_do_not_leak() -> None:
    """No global registry: a transform and the user's function die with their last reference,
    and what was kept for the function goes with it."""
    from axischeck._engine._predictor import _DECLARES_NOTHING

    verdicts = len(_DECLARES_NOTHING)
    refs = []
    for i in range(20):

        def user(x: jax.Array, i: int = i) -> jax.Array:
            return x * i

        f = ax.vmap(user, signature="(n)->(n)")
        g = ax.vmap(user)
        f.predict((3, i + 1))
        g.predict((3, i + 1))
        f(jnp.ones((2, 3)))
        g(jnp.ones((2, 3)))  # reads whether its annotations declare dims (they do not)
        refs.append((weakref.ref(user), weakref.ref(f), weakref.ref(g)))
        del user, f, g
    gc.collect()
    alive = [k for k, r in enumerate(refs) if any(w() is not None for w in r)]
    assert not alive, f"still alive: {alive}"
    assert len(_DECLARES_NOTHING) <= verdicts


def test_calls_keep_few_users_pytree_metadata_alive() -> None:
    """A fresh model each step (static metadata compared by identity) is a new cache key
    each call: the caches keep only the newest few of them, never every step's."""

    class Meta:  # identity equality and hash, as a plain class has
        pass

    class Model:
        def __init__(self, w: jax.Array, meta: Meta) -> None:
            self.w, self.meta = w, meta

    jax.tree_util.register_pytree_node(Model, lambda m: ((m.w,), m.meta), lambda meta, ch: Model(ch[0], meta))
    f = ax.vmap(lambda m, x: x * m.w, in_axes=(None, 0), signature={"m": None, "x": "n", "return": "n"})
    alive = []
    for _ in range(30):
        meta = Meta()
        alive.append(weakref.ref(meta))
        f(Model(jnp.float32(2.0), meta), jnp.ones((4, 3)))
        del meta
    gc.collect()
    assert sum(ref() is not None for ref in alive) <= 4
