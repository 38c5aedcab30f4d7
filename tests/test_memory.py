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
from typing import Any

import jax
import jax.numpy as jnp
import pytest

import axischeck as ax
from axischeck._debug import predictor_of, verdicts_kept
from axischeck._engine._predictor import Predictor
from jax_oracle import const


def test_prediction_cache_stays_bounded_under_100k_distinct_shapes(monkeypatch: pytest.MonkeyPatch) -> None:
    f = ax.vmap(lambda x: x, signature="(n)->(n)")
    predictor = predictor_of(f)
    first = f.predict((1, 1))
    for i in range(100_000):
        b, n = divmod(i, 317)
        shape = (b + 1, n + 1)
        pred = f.predict(shape)
        if i % 4999 == 0:
            assert pred.shapes == shape
            stored = predictor.stored()
            assert stored.predictions <= stored.capacity
    stored = predictor.stored()
    assert stored.predictions == stored.capacity
    assert len(stored.plans) == 1  # one call structure, one compiled plan
    derived: list[object] = []
    checked_answer = Predictor.checked_answer

    def counted(self: Predictor, *args: Any) -> Any:
        derived.append(args)
        return checked_answer(self, *args)

    monkeypatch.setattr(Predictor, "checked_answer", counted)
    assert f.predict(shape).shapes == shape and not derived  # the newest entries are kept...
    assert f.predict((1, 1)) == first and len(derived) == 1  # ...and the oldest evicted


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
    stored = predictor_of(f).stored()
    assert len(stored.plans) == stored.plan_capacity  # more structures than it keeps: full, not over
    assert stored.predictions <= stored.capacity


def test_decorated_functions_do_not_leak() -> None:
    """No global registry: a transform and the user's function die with their last reference,
    and what was kept for the function goes with it."""
    verdicts = verdicts_kept()
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
    assert verdicts_kept() <= verdicts


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
