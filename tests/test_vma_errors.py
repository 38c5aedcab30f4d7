"""VMA refusals of shard_map/smap (check_vma=True), explained in the user's terms.

The oracle is JAX: every case is first refused by JAX itself, every proposed option is run
through the real `jax.shard_map`/`jax.smap` on the 8 forced CPU devices, and every code
change a Fix line spells out (a psum, a cast to varying) is applied to the function and
run through JAX too.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from jax import lax
from jax.sharding import AbstractMesh
from jax.sharding import PartitionSpec as P

import axischeck as ax
from axischeck._core._jax_compat import replication_refused, varying_cast
from conftest import cpu_mesh_or_none

AUTO = jax.sharding.AxisType.Auto
MESH = cpu_mesh_or_none((2, 4), ("x", "y"), (AUTO, AUTO))  # None with fewer devices: its tests skip


def values(shape: tuple[int, ...]) -> jax.Array:
    n = int(np.prod(shape))
    return jnp.asarray((np.arange(n, dtype=np.float32) % 5.0).reshape(shape))


def refused(run: Callable[[], Any], cls: type[ax.AxisCheckError] = ax.AxisCheckError) -> ax.AxisCheckError:
    with pytest.raises(cls) as info:
        run()
    return info.value


def jax_refuses(make: Callable[..., Any], *args: Any) -> None:
    with pytest.raises((ValueError, TypeError)):
        jax.eval_shape(make, *args)


def fix_lines_are_the_suggestions(err: ax.AxisCheckError) -> None:
    """The Fix line says the suggestions (and then, where there are any, the readings the
    checks cannot tell from them)."""
    assert err.suggestions, str(err)
    assert err.fix is not None and err.fix.startswith("; or ".join(s.text for s in err.suggestions))


# ------------------------------------------------- out_specs promising replication


def loss_and_params(x: jax.Array, w: jax.Array) -> dict[str, jax.Array]:
    return {"loss": (x @ w).sum(), "w": w * 2.0}


@pytest.mark.devices(8)
def test_a_scalar_leaf_of_a_dict_output_names_the_leaf_the_axis_and_the_argument() -> None:
    x, w = values((8, 4)), values((4,))
    jax_refuses(jax.shard_map(loss_and_params, mesh=MESH, in_specs=(P("x"), P()), out_specs=P()), x, w)
    f = ax.shard_map(loss_and_params, mesh=MESH, in_specs=(P("x"), P()), out_specs=P())
    err = refused(lambda: f.predict(x, w), ax.OutputError)
    head = str(err).splitlines()[0]
    assert "output['loss']" in head and "mesh axis 'x'" in head
    assert "computed from x, whose in_specs entry P('x',) splits it over 'x'" in head
    assert "output['w']" not in head  # the replicated leaf is not blamed
    assert "JAX: out_specs is P()" in str(err)  # JAX's words kept
    # a scalar cannot be split: no option works; each device's loss is a partial sum, and
    # the hint names the psum, checked against the body on the whole arrays
    assert err.suggestions == ()
    assert err.hint is not None
    assert err.hint.startswith("each device's output['loss'] already has the shape the program gives the whole ()")
    assert "jax.lax.psum(..., 'x')" in err.hint

    def reduced(x: jax.Array, w: jax.Array) -> dict[str, jax.Array]:
        out = loss_and_params(x, w)
        return {**out, "loss": lax.psum(out["loss"], "x")}  # what the hint says

    got = jax.shard_map(reduced, mesh=MESH, in_specs=(P("x"), P()), out_specs=P())(x, w)
    assert jnp.allclose(got["loss"], (x @ w).sum())
    assert ax.shard_map(reduced, mesh=MESH, in_specs=(P("x"), P()), out_specs=P())(x, w)


@pytest.mark.devices(8)
def test_only_the_varying_leaf_of_a_tuple_gets_a_new_spec() -> None:
    def body(x: jax.Array, w: jax.Array) -> tuple[jax.Array, jax.Array]:
        return x.sum(1), w * 2.0

    x, w = values((8, 4)), values((4,))
    f = ax.shard_map(body, mesh=MESH, in_specs=(P("x"), P()), out_specs=P())
    err = refused(lambda: f.predict(x, w), ax.OutputError)
    assert "output[0]" in str(err).splitlines()[0] and "output[1]" not in str(err).splitlines()[0]
    fix_lines_are_the_suggestions(err)
    (only,) = err.suggestions
    assert only.as_kwargs() == {"out_specs": (P("x"), P())}
    got = jax.shard_map(body, mesh=MESH, in_specs=(P("x"), P()), **only.as_kwargs())(x, w)
    fixed = ax.shard_map(body, mesh=MESH, in_specs=(P("x"), P()), **only.as_kwargs())
    assert jax.tree.map(jnp.shape, got) == fixed.predict(x, w).shapes == ((8,), (4,))
    np.testing.assert_array_equal(fixed(x, w)[0], got[0])


@pytest.mark.devices(8)
def test_an_output_varying_over_two_axes_is_split_over_both_but_that_is_no_fix() -> None:
    """A per-device sum over the first dimension of a block split over ('x', 'y'): the spec
    that concatenates the blocks runs, but stacks 8 partial sums into (16,) where the body on
    the whole array gives (8,). The meaning check says so, and the hint says to reduce."""

    def body(x: jax.Array) -> jax.Array:
        return x.sum(0)

    x = values((8, 8))
    f = ax.shard_map(body, mesh=MESH, in_specs=P("x", "y"), out_specs=P())
    err = refused(lambda: f.predict(x), ax.OutputError)
    assert "mesh axes 'x' and 'y'" in str(err).splitlines()[0]
    assert err.suggestions == () and err.fix is None
    (runs_but,) = [n for n in err.notes if n.startswith("Runs, but ")]
    assert "its output has shape (16,), where the program on one device gives (8,)" in runs_but
    assert "out_specs=P(('x', 'y'))" in runs_but
    got = jax.shard_map(body, mesh=MESH, in_specs=P("x", "y"), out_specs=P(("x", "y")))(x)
    assert got.shape == (16,) and body(x).shape == (8,)  # what the note says: it runs, and computes another thing
    assert err.hint is not None and "reduce output over ('x', 'y') first" in err.hint


@pytest.mark.devices(8)
@pytest.mark.parametrize(
    ("body", "axis", "culprit", "differs"),
    [
        (lambda x, w: lax.ppermute(w, "x", [(0, 1), (1, 0)]), "x", "jax.lax.ppermute over 'x'", False),
        (lambda x, w: lax.axis_index("y") * w, "y", "jax.lax.axis_index over 'y'", True),
        (lambda x, w: lax.all_gather(w, "x"), "x", "jax.lax.all_gather over 'x'", False),
    ],
)
def test_a_collective_that_makes_a_value_vary_is_named(body: Any, axis: str, culprit: str, differs: bool) -> None:
    """The collective that makes the output vary is named. Where the blocks do differ per
    device (a device's index), the out_specs naming the axis is the fix; a ppermute or an
    all_gather of the replicated w gives every device the same block, which that out_specs
    would only repeat: no fix, and the note says so."""
    x, w = values((8, 4)), values((4,))
    jax_refuses(jax.shard_map(body, mesh=MESH, in_specs=(P("x"), P()), out_specs=P()), x, w)
    f = ax.shard_map(body, mesh=MESH, in_specs=(P("x"), P()), out_specs=P())
    err = refused(lambda: f.predict(x, w), ax.OutputError)
    head = str(err).splitlines()[0]
    assert f"mesh axis {axis!r}" in head and culprit in head, head
    assert "computed from" not in head  # w is replicated: no argument is blamed
    if not differs:
        assert err.suggestions == ()
        assert any(n.startswith("Runs, but its output repeats one block 2 times") for n in err.notes), str(err)
        return
    fix_lines_are_the_suggestions(err)
    for s in err.suggestions:
        jax.eval_shape(jax.shard_map(body, mesh=MESH, in_specs=(P("x"), P()), **s.as_kwargs()), x, w)


@pytest.mark.devices(8)
def test_under_vmap_the_leaf_and_axis_are_named_too() -> None:
    x, w = values((3, 8, 4)), values((4,))
    inner = ax.shard_map(loss_and_params, mesh=MESH, in_specs=(P("x"), P()), out_specs=P())
    err = refused(lambda: ax.vmap(inner, in_axes=(0, None)).predict(x, w), ax.OutputError)
    assert "output['loss']" in str(err).splitlines()[0] and "'x'" in str(err).splitlines()[0]


def test_a_mesh_larger_than_the_machine() -> None:
    mesh = AbstractMesh((16, 4), ("data", "model"), axis_types=(AUTO, AUTO))
    x = jax.ShapeDtypeStruct((64, 8), jnp.float32)
    jax_refuses(jax.shard_map(lambda a: (a, a.sum(1)), mesh=mesh, in_specs=P("data"), out_specs=P()), x)
    f = ax.shard_map(lambda a: (a, a.sum(1)), mesh={"data": 16, "model": 4}, in_specs=P("data"), out_specs=P())
    err = refused(lambda: f.predict((64, 8)), ax.OutputError)
    assert "output[0] and output[1]" in str(err).splitlines()[0] and "'data'" in str(err).splitlines()[0]
    (only,) = err.suggestions
    want = jax.eval_shape(jax.shard_map(lambda a: (a, a.sum(1)), mesh=mesh, in_specs=P("data"), **only.as_kwargs()), x)
    assert jax.tree.map(lambda s: s.shape, want) == ((64, 8), (64,))


@pytest.mark.devices(8)
def test_a_call_raises_jaxs_exception_type() -> None:
    x, w = values((8, 4)), values((4,))
    f = ax.shard_map(loss_and_params, mesh=MESH, in_specs=(P("x"), P()), out_specs=P())
    with pytest.raises(ValueError) as info:
        f(x, w)
    assert isinstance(info.value, ax.AxisCheckError) and "output['loss']" in str(info.value)
    # JAX's message once, whole: the line the engine's own trace quoted gives way to it.
    jax_lines = [line for line in str(info.value).splitlines() if line.lstrip().startswith("JAX: ")]
    assert len(jax_lines) == 1 and jax_lines[0].lstrip().startswith("JAX: ValueError: "), jax_lines


@pytest.mark.devices(8)
def test_what_a_vma_error_costs_in_traces() -> None:
    calls = []

    def body(x: jax.Array, w: jax.Array) -> tuple[jax.Array, jax.Array]:
        calls.append(1)
        return x.sum(1), w

    f = ax.shard_map(body, mesh=MESH, in_specs=(P("x"), P()), out_specs=P())
    err = refused(lambda: f.predict(values((8, 4)), values((4,))), ax.OutputError)
    assert err.suggestions
    # JAX's own trace, one to read the vma types for the message, one for the fix search
    # and one to check the fix with the engine; then one to see whether the body's values
    # depend on its mesh, and one run each of the body on one device and of the fix: what
    # the program means
    assert len(calls) <= 7, len(calls)


# --------------------------------------------------------------------------- smap


@pytest.mark.devices(8)
def test_smap_out_axes_none_on_a_varying_output() -> None:
    def body(a: jax.Array, b: jax.Array) -> tuple[jax.Array, jax.Array]:
        return a * 2.0, b.sum()

    a, b = values((16, 3)), values((4,))
    mesh = jax.make_mesh((8,), ("x",), axis_types=(AUTO,))
    with jax.set_mesh(mesh):
        jax_refuses(jax.smap(body, in_axes=(0, None), out_axes=None, axis_name="x"), a, b)
        f = ax.smap(body, in_axes=(0, None), out_axes=None, axis_name="x")
        err = refused(lambda: f.predict(a, b), ax.OutputError)
        head = str(err).splitlines()[0]
        assert "output[0]" in head and "output[1]" not in head and "in_axes entry 0 splits it over 'x'" in head
        fix_lines_are_the_suggestions(err)
        (only,) = err.suggestions
        assert only.as_kwargs() == {"out_axes": (0, None)}
        got = jax.smap(body, in_axes=(0, None), axis_name="x", **only.as_kwargs())(a, b)
        fixed = ax.smap(body, in_axes=(0, None), axis_name="x", **only.as_kwargs())
        assert jax.tree.map(jnp.shape, got) == fixed.predict(a, b).shapes == ((16, 3), ())


# ----------------------------------------------- loop carries and branches


@pytest.mark.devices(8)
def test_a_scan_carry_that_starts_invariant() -> None:
    def body(x: jax.Array, w: jax.Array) -> jax.Array:
        c, _ = lax.scan(lambda c, _: (c + x[0], None), w, None, length=3)
        return c

    x, w = values((8, 4)), values((4,))
    jax_refuses(jax.shard_map(body, mesh=MESH, in_specs=(P("x"), P()), out_specs=P("x")), x, w)
    f = ax.shard_map(body, mesh=MESH, in_specs=(P("x"), P()), out_specs=P("x"))
    err = refused(lambda: f.predict(x, w), ax.FunctionError)
    account = err.problem  # the account leads; JAX's words follow once
    assert "jax.lax.scan" in account and "the initial carry c" in account and "mesh axis 'x'" in account
    assert "x (in_specs entry P('x',))" in account  # the argument that brings the variation in
    assert err.hint is not None and varying_cast("init", ("x",)) in err.hint
    assert err.hint.startswith("make the carry c vary along 'x' from the start: pass jax.lax.pcast(")
    assert str(err).splitlines()[0].endswith(account)
    assert err.notes == (f"JAX: TypeError: {err.__cause__}",)  # JAX's words kept, once
    with pytest.raises(TypeError) as called:  # JAX's type, our account first
        ax.shard_map(body, mesh=MESH, in_specs=(P("x"), P()), out_specs=P("x"))(x, w)
    assert isinstance(called.value, ax.FunctionError)
    ours = str(called.value)
    assert ours.splitlines()[0].endswith(account) and err.hint in ours
    assert ours.count("scan body function carry input and carry output must have equal types") == 1

    def fixed(x: jax.Array, w: jax.Array) -> jax.Array:  # the fix, applied
        c, _ = lax.scan(lambda c, _: (c + x[0], None), lax.pcast(w, "x", to="varying"), None, length=3)
        return c

    assert jax.shard_map(fixed, mesh=MESH, in_specs=(P("x"), P()), out_specs=P("x"))(x, w).shape == (8,)


@pytest.mark.devices(8)
def test_cond_branches_name_the_invariant_branch() -> None:
    def body(x: jax.Array, w: jax.Array) -> jax.Array:
        return lax.cond(True, lambda: x[0], lambda: w)

    x, w = values((8, 4)), values((4,))
    jax_refuses(jax.shard_map(body, mesh=MESH, in_specs=(P("x"), P()), out_specs=P("x")), x, w)
    err = refused(
        lambda: ax.shard_map(body, mesh=MESH, in_specs=(P("x"), P()), out_specs=P("x")).predict(x, w),
        ax.FunctionError,
    )
    assert "the output of false_fun is the same on every device along mesh axis 'x'" in err.problem
    assert err.hint == f"in false_fun, return {varying_cast('out', ('x',))} (out: what false_fun returns now)"

    def fixed(x: jax.Array, w: jax.Array) -> jax.Array:
        return lax.cond(True, lambda: x[0], lambda: lax.pcast(w, "x", to="varying"))

    assert jax.shard_map(fixed, mesh=MESH, in_specs=(P("x"), P()), out_specs=P("x"))(x, w).shape == (8,)


@pytest.mark.devices(8)
def test_a_fori_loop_carry_in_a_tuple() -> None:
    def body(x: jax.Array, w: jax.Array) -> jax.Array:
        return lax.fori_loop(0, 2, lambda i, c: (c[0] + x[0], c[1]), (w, w))[0]

    x, w = values((8, 4)), values((4,))
    err = refused(
        lambda: ax.shard_map(body, mesh=MESH, in_specs=(P("x"), P()), out_specs=P("x")).predict(x, w),
        ax.FunctionError,
    )
    assert "the initial carry loop_carry[1][0]" in err.problem


@pytest.mark.devices(8)
def test_smap_carry_speaks_in_axes() -> None:
    def body(a: jax.Array, b: jax.Array) -> jax.Array:
        return lax.scan(lambda c, _: (c + a[0], None), b, None, length=2)[0]

    a, b = values((16, 3)), values((3,))
    with jax.set_mesh(jax.make_mesh((8,), ("x",), axis_types=(AUTO,))):
        jax_refuses(jax.smap(body, in_axes=(0, None), out_axes=0, axis_name="x"), a, b)
        err = refused(
            lambda: ax.smap(body, in_axes=(0, None), out_axes=0, axis_name="x").predict(a, b), ax.FunctionError
        )
    assert "a (in_axes entry 0)" in err.problem


@pytest.mark.devices(8)
def test_explicit_mesh_call_names_every_varying_leaf() -> None:
    mesh = jax.make_mesh((2, 4), ("x", "y"), axis_types=(jax.sharding.AxisType.Explicit,) * 2)
    x = jax.device_put(values((8, 4)), jax.sharding.NamedSharding(mesh, P("x")))
    w = jax.device_put(values((4,)), jax.sharding.NamedSharding(mesh, P()))

    def body(x: jax.Array, w: jax.Array) -> dict[str, jax.Array]:
        return {"loss": x.sum(), "h": x * w[None, :], "w": w}

    with pytest.raises(ValueError):
        jax.shard_map(body, mesh=mesh, in_specs=(P("x"), P()), out_specs=P())(x, w)
    with pytest.raises(ValueError) as info:
        ax.shard_map(body, mesh=mesh, in_specs=(P("x"), P()), out_specs=P())(x, w)
    err = info.value
    assert isinstance(err, ax.OutputError)
    head = str(err).splitlines()[0]
    assert "output['h'] and output['loss']" in head and "output['w']" not in head
    # output['loss'] is a scalar: no spec holds it, so the hint names what can be split and what to reduce
    assert err.suggestions == ()
    assert err.hint is not None and "out_specs entry of output['h']" in err.hint
    assert "reduce output['h'] and output['loss'] over 'x' first" in err.hint


@pytest.mark.devices(8)
@pytest.mark.parametrize(
    ("axes", "fix"),
    [
        ("x", "drop the cast"),
        (("x", "y"), f"cast it along the others only: {varying_cast('x', ('y',))}"),
    ],
)
def test_a_cast_to_varying_of_a_value_that_already_varies(axes: Any, fix: str) -> None:
    def body(x: jax.Array) -> jax.Array:
        return lax.pcast(x, axes, to="varying")

    x = values((8, 4))
    jax_refuses(jax.shard_map(body, mesh=MESH, in_specs=P("x"), out_specs=P("x")), x)
    err = refused(lambda: ax.shard_map(body, mesh=MESH, in_specs=P("x"), out_specs=P("x")).predict(x), ax.FunctionError)
    assert "already varies" in err.problem and err.hint is not None and err.hint.startswith(fix)
    if isinstance(axes, tuple):  # the fix, applied, runs

        def fixed(x: jax.Array) -> jax.Array:
            return lax.pcast(x, "y", to="varying")

        assert jax.shard_map(fixed, mesh=MESH, in_specs=P("x"), out_specs=P("x", "y"))(x).shape == (8, 16)


# ------------------------------------------------------ against JAX, many cases

BODIES: dict[str, Callable[[jax.Array], Any]] = {
    "identity": lambda a: a,
    "sum0": lambda a: a.sum(0),
    "total": lambda a: a.sum(),
    "pair": lambda a: (a, a.sum()),
    "dict": lambda a: {"s": a.sum(0), "a": a * 2.0},
    "index": lambda a: lax.axis_index("x") * a,
    "psum": lambda a: lax.psum(a, "x"),
    "gather": lambda a: lax.all_gather(a, "y", tiled=True),
}
IN_SPECS = [P(), P("x"), P("y"), P("x", "y"), P(("x", "y"))]
OUT_SPECS = [P(), P("x"), P(None, "y"), P("y"), P(("x", "y"))]


@given(st.sampled_from(sorted(BODIES)), st.sampled_from(IN_SPECS), st.sampled_from(OUT_SPECS))
def test_every_replication_refusal_names_a_leaf_and_its_fixes_run_in_jax(
    body: str, in_spec: Any, out_spec: Any
) -> None:
    fn = BODIES[body]
    x = jax.ShapeDtypeStruct((8, 8), jnp.float32)
    try:
        jax.eval_shape(jax.shard_map(fn, mesh=MESH, in_specs=in_spec, out_specs=out_spec), x)
    except ValueError as err:
        if replication_refused(err) is None:
            return  # another mistake: other tests hold those
    else:
        return
    f = ax.shard_map(fn, mesh=MESH, in_specs=in_spec, out_specs=out_spec)
    ours = refused(lambda: f.predict(x), ax.OutputError)
    head = str(ours).splitlines()[0]
    assert re.search(r"output(\[\d+\]|\['\w+'\])? (is|and) ", head) and "mesh ax" in head, head
    assert ours.fix is not None or ours.hint is not None  # a checked fix, or what to do in words
    for s in ours.suggestions:
        assert ours.fix is not None and ours.fix.startswith("; or ".join(t.text for t in ours.suggestions))
        want = jax.eval_shape(jax.shard_map(fn, mesh=MESH, in_specs=in_spec, **s.as_kwargs()), x)
        got = ax.shard_map(fn, mesh=MESH, in_specs=in_spec, **s.as_kwargs()).predict(x).shapes
        assert jax.tree.map(lambda w: tuple(w.shape), want) == got
