"""Thread safety: transforms shared between threads answer right, and no lock deadlocks.

Eight threads share decorated functions and make thousands of mixed predictions (hits,
misses, evictions, failures); every answer is checked against arithmetic or a
`jax.eval_shape` oracle computed before the threads start. (test_calls.py has a smaller
one for a single transform, and test_patch.py patches from several threads.)
"""

from __future__ import annotations

import gc
import random
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
from jax.sharding import PartitionSpec as P

import axischeck as ax
from axischeck._debug import predictor_of


class Task(NamedTuple):
    target: str
    args: tuple[Any, ...]
    expected: Any  # an output shape (tuple), a dict of bindings, or an exception class
    axis_size: int | None = None
    symbol: str | None = None  # the conflicting symbol, for expected errors


def _traced_fn(x: jax.Array, w: jax.Array) -> jax.Array:
    return jnp.tanh(x @ w).sum(0)


def _thread_targets() -> dict[str, Any]:
    return {
        "add": ax.vmap(lambda x, y: x + y, in_axes=(0, 1), signature="(n),(n)->(n)"),
        "mm": ax.vmap(lambda a, b: a @ b, in_axes=(None, 0), out_axes=1, signature="(a,b),(b,c)->(a,c)"),
        "var": ax.vmap(lambda x: x, in_axes=-1, signature="*s n -> *s n"),
        "chk": ax.check(lambda X, W: X @ W, signature="n f, f o -> n o"),
        "nested": ax.vmap(ax.vmap(lambda x: x.sum(), signature="(n)->()"), in_axes=1),
        "traced": ax.vmap(_traced_fn, in_axes=(0, None)),
        "sig": ax.Signature("(a,b),(b,c)->(a,c)").vmap(in_axes=(0, 1)),
        "shard": ax.shard_map(
            lambda a, b: a @ b,
            mesh={"x": 4, "y": 2},
            in_specs=(P("x", None), P(None, "y")),
            out_specs=P("x", "y"),
            signature="(n,k),(k,m)->(n,m)",
        ),
    }


_TRACED_POOL = [(b, k, m, p) for b in (1, 2, 3) for k in (1, 2) for m in (2, 3) for p in (1, 4)]


def _traced_oracle() -> dict[tuple[tuple[int, ...], tuple[int, ...]], Any]:
    """Before any thread starts: what plain JAX says for every traced case we will ask."""
    oracle: dict[tuple[tuple[int, ...], tuple[int, ...]], Any] = {}
    plain = jax.vmap(_traced_fn, in_axes=(0, None))
    for b, k, m, p in _TRACED_POOL:
        for wm in (m, m + 1):
            xs, ws = (b, k, m), (wm, p)
            try:
                out = jax.eval_shape(
                    plain, jax.ShapeDtypeStruct(xs, jnp.float32), jax.ShapeDtypeStruct(ws, jnp.float32)
                )
                oracle[xs, ws] = tuple(out.shape)
            except Exception:
                oracle[xs, ws] = ax.FunctionError
    return oracle


def _tasks(rng: random.Random, thread: int, count: int, oracle: dict[Any, Any]) -> Iterator[Task]:
    fresh = iter(range(100 + 1000 * thread, 10**9))
    for _ in range(count):

        def size() -> int:
            return next(fresh) if rng.random() < 0.15 else rng.randint(1, 5)  # misses, and many hits

        kinds = ["add", "add", "mm", "var", "chk", "nested", "sig", "sig-unify", "shard"]
        kind = "traced" if rng.random() < 0.006 else rng.choice(kinds)  # tracing is slow: a few
        bad = rng.random() < 0.2
        if kind == "add":
            b, n = size(), size()
            if not bad:
                yield Task("add", ((b, n), (n, b)), (b, n), b)
            elif rng.random() < 0.5:
                yield Task("add", ((b, n), (n + 1, b)), ax.ArgumentError, symbol="n")
            else:
                yield Task("add", ((b, n), (n, b + 1)), ax.ArgumentError, symbol="batch size B")
        elif kind == "mm":
            a, k, c, b = size(), size(), rng.randint(1, 4), size()
            if bad:
                yield Task("mm", ((a, k), (b, k + 1, c)), ax.ArgumentError, symbol="b")
            else:
                yield Task("mm", ((a, k), (b, k, c)), (a, b, c), b)
        elif kind == "var":
            s = tuple(rng.randint(0, 3) for _ in range(rng.randint(0, 3)))
            n, b = size(), size()
            if bad:
                yield Task("var", ((b,),), ax.ArgumentError)  # per-example () has no 'n'
            else:
                yield Task("var", (s + (n, b),), (b,) + s + (n,), b)
        elif kind == "chk":
            n, f, o = size(), size(), rng.randint(1, 4)
            if bad:
                yield Task("chk", ((n, f), (f + 1, o)), ax.ArgumentError, symbol="f")
            else:
                yield Task("chk", ((n, f), (f, o)), (n, o), None)
        elif kind == "nested":
            bi, bo, n = size(), size(), rng.randint(1, 4)
            if bad:
                yield Task("nested", ((bi, bo),), ax.ArgumentError)
            else:
                yield Task("nested", ((bi, bo, n),), (bo, bi), bo)
        elif kind == "shard":  # blocks (n, k) @ (k, m) on a 4 x 2 mesh
            n, k, m = size(), size(), size()
            if bad:
                yield Task("shard", ((4 * n + 1, k), (k, 2 * m)), ax.ArgumentError)
            else:
                yield Task("shard", ((4 * n, k), (k, 2 * m)), (4 * n, 2 * m), None)
        elif kind in ("sig", "sig-unify"):
            b, a, k, c = size(), size(), size(), size()
            args = ((b, a, k), (k + bad, b, c))
            if kind == "sig":
                yield Task(
                    "sig", args, ax.ArgumentError if bad else (b, a, c), None if bad else b, "b" if bad else None
                )
            else:
                yield Task("sig-unify", args, ax.Conflict if bad else {"a": a, "b": k, "c": c, "B": b})
        else:
            b, k, m, p = rng.choice(_TRACED_POOL)
            xs, ws = (b, k, m), (m + bad, p)
            expected = oracle[xs, ws]
            yield Task("traced", (xs, ws), expected, b if isinstance(expected, tuple) else None)


def _run_task(targets: dict[str, Any], task: Task, rng: random.Random) -> None:
    if task.target == "sig-unify":
        got = targets["sig"].unify(*task.args)
        if task.expected is ax.Conflict:
            assert isinstance(got, ax.Conflict) and got.symbol == "b", (task, got)
        else:
            assert isinstance(got, ax.Bindings) and dict(got.sizes) == task.expected, (task, got)
        return
    target = targets[task.target]
    if isinstance(task.expected, type):
        try:
            target.predict(*task.args)
        except task.expected as err:
            if task.symbol is not None:
                assert err.symbol == task.symbol, (task, err.symbol)
            if rng.random() < 0.2 and task.target != "sig":
                text = target.explain(*task.args)
                assert text.startswith(type(err).__name__), (task, text)
            return
        raise AssertionError(f"{task}: no {task.expected.__name__}")
    pred = target.predict(*task.args)
    assert pred.shapes == task.expected, (task, pred.shapes)
    assert type(pred.shapes) is ax.Shape
    assert pred.axis_size == task.axis_size, (task, pred.axis_size)
    if task.target == "shard":
        assert pred.block_shapes == (task.expected[0] // 4, task.expected[1] // 2), (task, pred)
    if rng.random() < 0.1:  # the lazy derivation table, replayed concurrently
        assert str(ax.Shape(task.expected)) in str(pred), (task, str(pred))
    if task.target == "add" and max(task.expected) <= 3 and rng.random() < 0.02:  # now and then, a real call
        x, y = (jnp.ones(s) for s in task.args)
        assert target(x, y).shape == task.expected


def test_threads_share_decorated_functions_without_wrong_answers() -> None:
    targets = _thread_targets()
    oracle = _traced_oracle()
    n_threads, per_thread = 8, 1250
    plans = [list(_tasks(random.Random(1000 + t), t, per_thread, oracle)) for t in range(n_threads)]
    failures: list[str] = []
    done = [0] * n_threads
    barrier = threading.Barrier(n_threads)

    def work(t: int) -> None:
        rng = random.Random(t)
        try:
            barrier.wait(timeout=30)
            for task in plans[t]:
                try:
                    _run_task(targets, task, rng)
                except Exception as err:
                    failures.append(f"thread {t}: {type(err).__name__}: {str(err)[:400]}")
                done[t] += 1
        except Exception as err:
            failures.append(f"thread {t} died: {type(err).__name__}: {err}")

    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)  # switch threads often: more interleavings
    try:
        threads = [threading.Thread(target=work, args=(t,), daemon=True) for t in range(n_threads)]
        for th in threads:
            th.start()
        deadline = time.monotonic() + 120
        for th in threads:
            th.join(timeout=max(0.0, deadline - time.monotonic()))
    finally:
        sys.setswitchinterval(old)
    stuck = [i for i, th in enumerate(threads) if th.is_alive()]
    assert not stuck, f"threads {stuck} did not finish (deadlock?); progress {done}"
    assert not failures, f"{len(failures)} wrong answers, e.g.:\n" + "\n".join(failures[:10])
    assert done == [per_thread] * n_threads
    # The caches were hammered with misses: still at their bound.
    for name in ("add", "mm", "var", "chk", "nested"):
        stored = predictor_of(targets[name]).stored()
        assert stored.predictions <= stored.capacity


def test_a_function_collected_while_the_predictor_table_is_locked_does_not_deadlock() -> None:
    # The garbage collector may run a weakref callback inside any allocation, including one
    # made while the table's lock is held (it hung a pmap test on Python 3.13 once).
    from axischeck._core._cache import PerFunction

    table: PerFunction[object] = PerFunction()

    def scenario() -> None:
        def fun() -> None: ...

        table.get_or_make(fun, "options", object)
        with table._lock:
            del fun
            gc.collect()  # runs the callback for fun right here

    worker = threading.Thread(target=scenario, daemon=True)
    worker.start()
    worker.join(timeout=30)
    assert not worker.is_alive(), "the weakref callback waited for the lock its own thread holds"
    assert len(table) == 0
