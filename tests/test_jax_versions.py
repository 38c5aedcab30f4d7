"""The facts that differ between JAX versions (`axischeck._core._jax_compat`), each tested on
whichever JAX is installed: axischeck answers as this JAX does."""

from __future__ import annotations

import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax
from jax.sharding import AbstractMesh, AxisType, Mesh
from jax.sharding import PartitionSpec as P

import axischeck as ax
from axischeck._core import _jax_compat as compat

AUTO = AxisType.Auto


def _mesh(sizes: tuple[int, ...], names: tuple[str, ...]) -> Mesh:
    devices = np.array(jax.devices()[: int(np.prod(sizes))]).reshape(sizes)
    return Mesh(devices, names, axis_types=(AUTO,) * len(names))


def test_default_axis_type_of_an_abstract_mesh_is_read_from_jax() -> None:
    assert AbstractMesh((2,), ("x",)).axis_types == (compat.DEFAULT_MESH_AXIS_TYPE,)
    want = AxisType.Auto if compat.JAX_VERSION < (0, 11, 1) else AxisType.Explicit
    assert compat.DEFAULT_MESH_AXIS_TYPE == want


NEGATIVE_AXIS_BODIES = {
    "psum_scatter": lambda a: lax.psum_scatter(a, "x", scatter_dimension=-1, tiled=True),
    "all_to_all": lambda a: lax.all_to_all(a, "x", -2, -1, tiled=True),
}


@pytest.mark.devices(8)
@pytest.mark.parametrize("name", sorted(NEGATIVE_AXIS_BODIES))
def test_negative_collective_axes_answer_as_this_jax_lowers_them(name: str) -> None:
    mesh = _mesh((4,), ("x",))
    body = NEGATIVE_AXIS_BODIES[name]
    f = ax.shard_map(body, mesh=mesh, in_specs=P("x"), out_specs=P("x"))
    x = jnp.arange(4 * 8 * 4, dtype=jnp.float32).reshape(4, 8, 4)
    if compat.NEGATIVE_COLLECTIVE_AXES_FAIL_LOWERING:  # jax < 0.11: traces, then fails to lower
        with pytest.raises(ax.CollectiveError, match="negative axis") as predicted:
            f.predict(x)
        assert "count the axis from the front" in str(predicted.value)
        if name == "psum_scatter":  # (all_to_all can crash the process when JAX 0.10 lowers it)
            with pytest.raises(ValueError, match="scatter_dimension"):  # JAX's own, when lowering
                jax.shard_map(body, mesh=mesh, in_specs=P("x"), out_specs=P("x"))(x)
            with pytest.raises(ValueError) as called:  # a failed call is diagnosed
                f(x)
            assert isinstance(called.value, ax.CollectiveError) and "negative axis" in str(called.value)
    else:
        want = jax.shard_map(body, mesh=mesh, in_specs=P("x"), out_specs=P("x"))(x)
        assert f.predict(x).shapes == want.shape
        np.testing.assert_array_equal(f(x), want)


def _ring(a: jax.Array) -> jax.Array:
    return lax.ppermute(a, ("y", "x"), [(i, (i + 1) % 8) for i in range(8)])


@pytest.mark.devices(8)
def test_ppermute_over_axes_out_of_mesh_order_follows_jax_setting() -> None:
    mesh = _mesh((2, 4), ("x", "y"))
    specs = {"mesh": mesh, "in_specs": P(("x", "y")), "out_specs": P(("x", "y"))}
    f = ax.shard_map(_ring, **specs)
    x = jnp.arange(8 * 3, dtype=jnp.float32).reshape(8, 3)
    if not compat.ppermute_axes_in_mesh_order():  # jax < 0.11.1 accepts any order
        np.testing.assert_array_equal(f(x), jax.shard_map(_ring, **specs)(x))
        assert f.predict(x).shapes == (8, 3)
        return
    with pytest.raises(ax.CollectiveError, match=r"out of the mesh's order \('x', 'y'\)") as predicted:
        f.predict(x)
    assert "axis_name=('x', 'y')" in str(predicted.value)
    with pytest.raises(RuntimeError) as called:  # JAX's own type, from lowering
        f(x)
    assert isinstance(called.value, ax.CollectiveError)
    with pytest.raises(RuntimeError):
        jax.shard_map(_ring, **specs)(x)
    from jax._src import config

    with config.raise_on_ppermute_sort_diff(False):  # JAX's switch: then JAX runs it
        assert not compat.ppermute_axes_in_mesh_order()
        assert f.predict(x).shapes == (8, 3)
        np.testing.assert_array_equal(f(x), jax.shard_map(_ring, **specs)(x))
    with pytest.raises(ax.CollectiveError):  # the answer under the switch is not served after it
        f.predict(x)


def test_quiet_tracebacks_turns_jax_s_filtering_off_and_back() -> None:
    from axischeck._core._jax_compat import quiet_tracebacks

    before = jax.config.jax_traceback_filtering
    with quiet_tracebacks():
        assert jax.config.jax_traceback_filtering == "off"
        with pytest.raises(TypeError):
            jax.eval_shape(lambda x: x + "a", 1.0)
    assert jax.config.jax_traceback_filtering == before


@pytest.mark.devices(8)
def test_abstract_values_are_jax_s_own_made_once_per_distinct_struct() -> None:
    mesh = _mesh((2,), ("x",))
    plain = jax.ShapeDtypeStruct((4, 3), jnp.float32)
    weak = jax.ShapeDtypeStruct((4, 3), jnp.float32, weak_type=True)
    sharded = jax.ShapeDtypeStruct((4, 3), jnp.float32, sharding=jax.sharding.NamedSharding(mesh, P("x")))
    wide = jax.ShapeDtypeStruct((4, 3), jnp.float64)  # truncated as JAX truncates it (x64 off)
    structs = [plain, jax.ShapeDtypeStruct((4, 3), jnp.float32), weak, sharded, wide, 2.0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # newer JAX warns of the truncation, older truncates silently
        avals = compat.abstract_values(structs)
        want = [jax.typeof(s) for s in structs[:-1]]
    assert avals[:-1] == want and avals[-1] == 2.0
    assert [a.weak_type for a in avals[:3]] == [False, False, True]
    assert avals[0] is avals[1]  # equal structs: one abstract value


def test_a_trace_over_abstract_values_answers_as_over_the_structs() -> None:
    def f(x: jax.Array, params: dict[str, jax.Array]) -> dict[str, jax.Array]:
        return {k: v.sum(0) * x[0] for k, v in params.items()}

    params = {f"w{k}": jax.ShapeDtypeStruct((5, 2 + k % 3), jnp.float32, weak_type=k % 2 == 0) for k in range(50)}
    x = jax.ShapeDtypeStruct((3,), jnp.int32)
    leaves, treedef = jax.tree_util.tree_flatten((x, params))
    rebuilt = jax.tree_util.tree_unflatten(treedef, compat.abstract_values(leaves))
    assert jax.eval_shape(f, *rebuilt) == jax.eval_shape(f, x, params)


@pytest.mark.devices(8)
def test_a_concrete_arrays_shape_is_its_abstract_values() -> None:
    """`.aval.shape`, which the checked call reads, is what `ArrayImpl.shape` returns, for
    every kind of concrete array a call may pass: the eager call's cache key depends on it."""
    mesh = _mesh((8,), ("x",))
    arrays = [
        jnp.ones((16, 8, 4)),
        jnp.float32(2.0),  # 0-d
        jnp.asarray(3.0, dtype=jnp.bfloat16),
        jnp.zeros((0, 3)),
        jax.device_put(jnp.ones((16, 2)), jax.sharding.NamedSharding(mesh, P("x"))),
        jax.jit(lambda a: a * 2)(jnp.ones((5, 7))),
        jax.random.normal(jax.random.key(0), (3, 2)),
    ]
    assert compat.CONCRETE_ARRAY_TYPES <= compat.TRUSTED_ARRAY_TYPES
    for x in arrays:
        assert type(x) in compat.CONCRETE_ARRAY_TYPES
        assert x.aval.shape == x.shape and type(x.aval.shape) is tuple
    assert jax.ShapeDtypeStruct not in compat.CONCRETE_ARRAY_TYPES


# jax 0.12.1: jax.vmap matches the containers of in_axes/out_axes to the arguments' and
# outputs' by position; earlier releases and pmap refuse a container of another type.


def _tree(kind: str, a: jax.Array, b: jax.Array) -> object:
    return {"tuple": (a, b), "list": [a, b], "dict": {"a": a, "b": b}}[kind]


KINDS = ("tuple", "list", "dict")


def _outcome(run: object) -> object:
    try:
        out = run()  # type: ignore[operator]
    except ValueError:  # JAX's own, or axischeck's (a ValueError too)
        return ValueError
    return jax.tree.map(lambda x: tuple(getattr(x, "shape", x)), out, is_leaf=lambda x: isinstance(x, ax.Shape))


@pytest.mark.parametrize("spec_kind", KINDS)
@pytest.mark.parametrize("arg_kind", KINDS)
def test_in_axes_containers_meet_the_arguments_as_this_jax_reads_them(spec_kind: str, arg_kind: str) -> None:
    x = jnp.arange(12.0).reshape(3, 4)
    arg = _tree(arg_kind, x, x.T)
    spec = (_tree(spec_kind, 0, 1),)
    want = _outcome(lambda: jax.vmap(lambda t: t, in_axes=spec)(arg))
    same_kind = spec_kind == arg_kind
    assert (want is ValueError) == (not same_kind and not compat.VMAP_MATCHES_CONTAINERS_BY_POSITION)
    f = ax.vmap(lambda t: t, in_axes=spec)
    assert _outcome(lambda: f(arg)) == want
    assert _outcome(lambda: f.predict(arg).shapes) == want


@pytest.mark.parametrize("spec_kind", KINDS)
def test_out_axes_containers_meet_the_outputs_as_this_jax_reads_them(spec_kind: str) -> None:
    x = jnp.arange(12.0).reshape(3, 4)
    out_axes = _tree(spec_kind, 0, 1)
    want = _outcome(lambda: jax.vmap(lambda v: (v, v * 2), out_axes=out_axes)(x))
    f = ax.vmap(lambda v: (v, v * 2), out_axes=out_axes)
    assert _outcome(lambda: f(x)) == want
    assert _outcome(lambda: f.predict(x).shapes) == want
    if spec_kind != "tuple":
        assert (want is ValueError) != compat.VMAP_MATCHES_CONTAINERS_BY_POSITION


def test_pmap_keeps_the_strict_prefix_on_every_release() -> None:
    x = jnp.arange(8.0).reshape(2, 4)
    arg = {"a": x, "b": x}
    with pytest.raises(ValueError):
        jax.pmap(lambda t: t, in_axes=((0, 0),))(arg)
    with pytest.raises(ax.AxisCheckError):
        ax.pmap(lambda t: t, in_axes=((0, 0),)).predict(arg)


def test_a_tuple_of_another_length_is_refused_on_every_release() -> None:
    x = jnp.arange(12.0).reshape(3, 4)
    arg = {"a": x, "b": x}
    with pytest.raises(ValueError):
        jax.vmap(lambda t: t, in_axes=((0, 0, 0),))(arg)
    with pytest.raises(ax.AxisCheckError, match=r"in_axes\[0\]"):
        ax.vmap(lambda t: t, in_axes=((0, 0, 0),)).predict(arg)


def test_lint_reads_the_same_release_threshold() -> None:
    from axischeck._lint import _jax_release

    assert _jax_release.installed_jax() == compat.JAX_VERSION
    assert _jax_release.vmap_matches_containers_by_position() == compat.VMAP_MATCHES_CONTAINERS_BY_POSITION
