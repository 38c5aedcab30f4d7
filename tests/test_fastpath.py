"""The compiled fast path answers exactly as the full engine does (shapes, blocks, tables,
refusals), and its answers are never reused where the context changes them; a checked
call's lookup by the arrays' shapes alone answers only where the full lookup would."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import pytest
from hypothesis import event, given
from hypothesis import strategies as st
from jax.sharding import AbstractMesh, AxisType
from jax.sharding import PartitionSpec as P

import axischeck as ax
from axischeck._debug import predictor_of
from axischeck._engine._fastpath import Plan, ShardPlan
from conftest import cpu_mesh

AUTO = AxisType.Auto


def _engine(f: Any, *shapes: tuple[int, ...]) -> Any:
    """The full engine's answer for these shapes, or the exception it raises."""
    try:
        return predictor_of(f).derive(_structs(shapes), {})
    except ax.AxisCheckError as err:
        return err


def _fast(f: Any, *shapes: tuple[int, ...]) -> Any:
    try:
        return f.predict(*_structs(shapes))
    except ax.AxisCheckError as err:
        return err


def _structs(shapes: tuple[tuple[int, ...], ...]) -> tuple[jax.ShapeDtypeStruct, ...]:
    return tuple(jax.ShapeDtypeStruct(s, jnp.float32) for s in shapes)


@st.composite
def shard_cases(draw: st.DrawFn) -> tuple[dict[str, int], P, P, str, tuple[int, ...]]:
    names = draw(st.sampled_from([("x",), ("x", "y"), ("n", "y")]))  # "n" is also a signature symbol
    mesh = {a: draw(st.sampled_from([1, 2, 4, 8])) for a in names}
    rank = draw(st.integers(1, 3))
    free = list(names)
    entries: list[Any] = []
    for _ in range(draw(st.integers(0, rank))):
        pick = draw(st.sampled_from([None, *free])) if free else None
        if pick is not None:
            free.remove(pick)
        entries.append(pick)
    in_spec = P(*entries)
    out_spec = draw(st.sampled_from([in_spec, P(*entries[:1]), P(*reversed(entries))]))
    symbols = ["n", "k", "m"][:rank]
    signature = f"({','.join(symbols)})->({','.join(symbols)})"
    shape = tuple(draw(st.sampled_from([1, 2, 3, 4, 8, 16, 24])) for _ in range(draw(st.integers(rank - 1, rank + 1))))
    return mesh, in_spec, out_spec, signature, shape


@given(shard_cases(), st.booleans())
def test_shard_map_fast_path_answers_as_the_engine(case: Any, check_vma: bool) -> None:
    mesh, in_spec, out_spec, signature, shape = case
    f = ax.shard_map(
        lambda a: a, mesh=mesh, in_specs=in_spec, out_specs=out_spec, check_vma=check_vma, signature=signature
    )
    fast, full = _fast(f, shape), _engine(f, shape)
    event("refused" if isinstance(full, Exception) else "answered")
    if isinstance(full, Exception):
        # The engine's account; the advice `predict` adds above it (a fix) is the same
        # layer whichever path found the refusal.
        assert type(fast) is type(full), (case, fast, full)
        assert (fast.transform, fast.problem) == (full.transform, full.problem)
        return
    assert not isinstance(fast, Exception), (case, fast)
    assert (fast.shapes, fast.block_shapes, fast.in_block_shapes, fast.mesh) == (
        full.shapes,
        full.block_shapes,
        full.in_block_shapes,
        full.mesh,
    )
    assert str(fast) == str(full)  # the table is derived when read, by the engine itself
    abstract = AbstractMesh(tuple(mesh.values()), tuple(mesh), axis_types=(AUTO,) * len(mesh))
    jax_fn = jax.shard_map(lambda a: a, mesh=abstract, in_specs=in_spec, out_specs=out_spec, check_vma=check_vma)
    want = jax.eval_shape(jax_fn, jax.ShapeDtypeStruct(shape, jnp.float32))
    assert fast.shapes == want.shape


def test_the_fast_path_serves_shard_map() -> None:
    """The benchmark's case really takes the plan (else the test above proves nothing)."""
    f = ax.shard_map(
        lambda a, w: a @ w,
        mesh={"x": 64},
        in_specs=(P("x", None), P()),
        out_specs=P("x", None),
        signature="(n,k),(k,m)->(n,m)",
    )
    pred = f.predict((128, 16), (16, 8))
    (plan,) = predictor_of(f).stored().plans
    assert isinstance(plan, ShardPlan) and isinstance(plan.inner, Plan)
    assert (pred.shapes, pred.block_shapes, pred.in_block_shapes) == ((128, 8), (2, 8), ((2, 16), (16, 8)))
    assert pred._steps is None  # nothing derived until someone reads the table


def test_a_mesh_axis_named_in_the_signature_binds_its_size() -> None:
    f = ax.shard_map(lambda a: a, mesh={"x": 4}, in_specs=P(None), out_specs=P(None), signature="(x)->(x)")
    assert f.predict((4,)).shapes == (4,)
    with pytest.raises(ax.ArgumentError, match="x"):
        f.predict((5,))


def test_a_cached_shard_map_answer_is_not_reused_under_another_context_mesh() -> None:
    """JAX refuses a shard_map whose mesh differs from the `jax.set_mesh` context: an answer
    cached outside the context must not stand inside it."""
    given_mesh = cpu_mesh((8,), ("x",), (AUTO,))
    context = cpu_mesh((4, 2), ("x", "y"), (AUTO, AUTO))
    f = ax.shard_map(lambda a: a * 2, mesh=given_mesh, in_specs=P("x"), out_specs=P("x"), signature="(n)->(n)")
    g = jax.shard_map(lambda a: a * 2, mesh=given_mesh, in_specs=P("x"), out_specs=P("x"))
    x = jax.ShapeDtypeStruct((16,), jnp.float32)
    assert f.predict(x).shapes == (16,)
    with jax.set_mesh(context):
        with pytest.raises(ValueError):
            jax.eval_shape(g, x)
        with pytest.raises(ax.SpecError, match="context mesh"):
            f.predict(x)
        with pytest.raises(ax.SpecError, match="context mesh"):
            f.predict(jax.ShapeDtypeStruct((32,), jnp.float32))  # first sight: the plan checks it too
    assert f.predict(x).shapes == (16,)


@pytest.mark.devices(8)
def test_a_checked_calls_shape_lookup_answers_only_where_the_full_one_would(monkeypatch: pytest.MonkeyPatch) -> None:
    """A kept eager call with a signature finds its cached prediction by the arrays' shapes
    alone (`arrays_key`), so the engine never runs again for shapes seen; a transform whose
    answers depend on more (the context mesh) or that defers to JAX never takes it, and
    the flat options key shares predictors only between equal options."""
    from axischeck._engine._predictor import Predictor

    x = jnp.ones((4, 3))
    f = ax.vmap(lambda v: v.sum(0), signature="(n)->()")
    f(x)
    assert predictor_of(f).stored().keyed_by_arrays
    checks: list[object] = []
    full_checks = Predictor.checked_answer

    def counted(self: Predictor, *args: Any) -> Any:
        checks.append(args)
        return full_checks(self, *args)

    monkeypatch.setattr(Predictor, "checked_answer", counted)
    assert f(jnp.zeros((4, 3))).shape == (4,) and not checks  # found by shapes
    assert f(jnp.zeros((5, 3))).shape == (5,) and len(checks) == 1  # new shapes: the engine
    assert f(v=x).shape == (4,) and len(checks) == 2  # by keyword: keyed by its tree, a new key
    assert f(v=x).shape == (4,) and len(checks) == 2  # and found by it after
    monkeypatch.undo()
    mesh = jax.make_mesh((8,), ("x",), axis_types=(jax.sharding.AxisType.Auto,))
    sharded = ax.shard_map(lambda a: a, mesh=mesh, in_specs=P("x"), out_specs=P("x"), signature="(n)->(n)")
    sharded(jnp.ones(16))
    assert not predictor_of(sharded).stored().keyed_by_arrays  # its answers depend on the context mesh
    # Flat options: equal options share one predictor, different ones never do.
    fun = lambda v: v  # noqa: E731
    assert predictor_of(ax.vmap(fun, in_axes=(0,))) is predictor_of(ax.vmap(fun, in_axes=(0,)))
    found = {id(predictor_of(ax.vmap(fun, in_axes=a))) for a in (0, (0,), 1, -1, None, [0])}
    assert len(found) == 6
