"""axischeck.testing: assert_predicts_jax, check_against_jax and set_n_cpu_devices."""

from __future__ import annotations

import re
import subprocess
import sys
from typing import Annotated, Any

import jax
import jax.numpy as jnp
import pytest
from hypothesis import given, settings
from hypothesis.errors import InvalidArgument

import axischeck as ax
import axischeck.strategies as axst
from axischeck.testing import assert_predicts_jax, check_against_jax, set_n_cpu_devices
from conftest import cpu_mesh, cpu_mesh_or_none

EINSUM = "(a,b),(b,c),(a,c)->(a,c)"


def complex_operation(x: jax.Array, y: jax.Array, z: jax.Array) -> jax.Array:
    return jnp.einsum("ab,bc->ac", x, y) + z


@pytest.mark.devices(8)
def test_agreement_and_both_raising() -> None:
    f = ax.vmap(complex_operation, in_axes=(0, 1, 0), signature=EINSUM)
    pred = assert_predicts_jax(f, (16, 8, 4), (4, 16, 2), (16, 8, 2))
    assert pred is not None and pred.shapes == (16, 8, 2)
    assert assert_predicts_jax(f, (16, 8, 4), (5, 16, 2), (16, 8, 2)) is None
    g = ax.pmap(lambda v: jax.lax.psum(v, "i"), axis_name="i")
    assert assert_predicts_jax(g, (8, 3)) is not None


def test_a_lying_signature_is_shown_as_a_diff() -> None:
    f = ax.vmap(lambda x: x.sum(0), signature="(n,k)->(k)")  # the truth is (k,) ... unless n != k
    assert_predicts_jax(f, (5, 3, 2))
    liar = ax.vmap(lambda x: x.sum(1), signature="(n,k)->(k)")
    with pytest.raises(AssertionError, match=r"output: JAX \(5, 3\), axischeck \(5, 2\)"):
        assert_predicts_jax(liar, (5, 3, 2))


@pytest.mark.devices(8)
@pytest.mark.slow
def test_set_n_cpu_devices() -> None:
    assert jax.device_count() == 8
    set_n_cpu_devices(8)  # already so: nothing to do
    with pytest.raises(ax.SpecError, match="already created its backends"):
        set_n_cpu_devices(4)
    code = (
        "from axischeck.testing import set_n_cpu_devices; set_n_cpu_devices(3); import jax; print(jax.device_count())"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    assert out.stdout.strip() == "3"


# ------------------------------------------------------------ check_against_jax


@ax.vmap(in_axes=(None, 0))
def dense(
    params: Annotated[dict[str, jax.Array], {"W": "o i", "b": "o"}], x: Annotated[jax.Array, "i"]
) -> Annotated[jax.Array, "o"]:
    return params["W"] @ x + params["b"]


def test_one_line_for_every_kind_of_transform() -> None:
    check_against_jax(ax.vmap(complex_operation, in_axes=(0, 1, 0), signature=EINSUM), max_examples=10)
    check_against_jax(
        ax.vmap(complex_operation, signature=ax.Signature.batched("(n,a,b),(b,n,c),(n,a,c)->(n,a,c)", over="n")),
        max_examples=10,
    )
    flat_sum = ax.vmap(lambda x: x.reshape(-1, x.shape[-1]).sum(0), in_axes=-1, out_axes=1, signature="(*s,k)->(k)")
    check_against_jax(flat_sum, max_examples=10)
    check_against_jax(ax.check(jnp.outer, signature="(a),(b)->(a,b)"), max_examples=10)
    nested = ax.vmap(ax.vmap(jnp.dot, in_axes=(0, None), signature="(n),(n)->()"), in_axes=(None, 0))
    check_against_jax(nested, max_examples=10)
    check_against_jax(ax.pmap(lambda x: x - jax.lax.pmean(x, "i"), axis_name="i", signature="(n)->(n)"), max_examples=5)
    # An axis name used as a dimension is the mapped size: drawn shapes honour it.
    gathered = ax.vmap(lambda x: jax.lax.all_gather(x, "i"), axis_name="i", signature="(k)->(i,k)")
    check_against_jax(gathered, max_examples=10)


def test_a_lying_signature_fails_with_the_drawn_shapes() -> None:
    liar = ax.vmap(lambda x, y: jnp.outer(y, x), signature="(a),(b)->(a,b)")
    with pytest.raises(AssertionError) as info:
        check_against_jax(liar, max_examples=20)
    message = str(info.value)
    assert message.startswith("vmap(<lambda>, in_axes=0, out_axes=0) with x=(")
    assert re.search(r"output: JAX \(\d+, \d+, \d+\), axischeck \(\d+, \d+, \d+\)", message), message


def test_a_signature_looser_than_the_function_fails() -> None:
    # The signature lets a and b differ; jnp.dot does not, so JAX refuses.
    loose = ax.vmap(jnp.dot, signature="(a),(b)->()")
    with pytest.raises(
        AssertionError, match=r"JAX refuses shapes that satisfy the declared signature \(a\), \(b\) -> \(\)"
    ):
        check_against_jax(loose, max_examples=20)
    check_against_jax(loose, sizes={"a": 3, "b": 3}, max_examples=5)  # pinned: now true


def test_a_real_run_that_fails_fails() -> None:
    # eval_shape and the prediction agree, but the real call raises: a host-side check
    # in the function that only concrete values trip.
    def picky(x: jax.Array) -> jax.Array:
        if not isinstance(x, jax.core.Tracer) and x.shape[0] > 1:
            raise ValueError("only vectors of one, for real")
        return x

    f = ax.check(picky, signature="(n)->(n)")
    check_against_jax(f, max_examples=10, real_run=False)
    with pytest.raises(
        AssertionError, match=r"^check\(picky, .*\) with x=\(2,\): the real call raises ValueError: only"
    ):
        check_against_jax(f, max_examples=10)


def test_check_against_jax_needs_a_declared_signature() -> None:
    with pytest.raises(ax.SpecError, match="no declared signature"):
        check_against_jax(ax.vmap(complex_operation))
    with pytest.raises(ax.SpecError, match="decorated by ax.vmap, ax.pmap, ax.shard_map or ax.check"):
        check_against_jax(complex_operation)  # type: ignore[arg-type]
    with pytest.raises(ax.SpecError, match="flat signatures"):
        check_against_jax(dense)
    with pytest.raises(ax.SpecError, match="static_broadcasted_argnums"):
        check_against_jax(ax.pmap(lambda x, k: x * k, static_broadcasted_argnums=1, signature="(n),()->(n)"))
    with pytest.raises(InvalidArgument, match="2 dtypes for 3 inputs"):
        check_against_jax(ax.vmap(complex_operation, signature=EINSUM), dtype=(jnp.float32, jnp.int32))


@settings(max_examples=30)
@given(
    axst.arguments_for(
        ax.vmap(ax.vmap(complex_operation, in_axes=(0, 1, 0), signature=EINSUM), in_axes=(None, 2, -1), axis_size=3)
    )
)
def test_arguments_for_follows_every_level(args: tuple[Any, ...]) -> None:
    x, y, z = (a.shape for a in args)
    assert len(x) == 3 and len(y) == 4 and len(z) == 4  # the outer level maps y and z only
    assert y[2] == 3 and z[3] == 3  # axis_size=3, at in_axes 2 and -1
    assert x[0] == y[1] == z[0]  # the inner batch
    assert x[2] == y[0] and x[1] == z[1] and y[3] == z[2]  # b, a, c


@settings(max_examples=20)
@given(axst.arguments_for(ax.pmap(jnp.negative, signature="(n)->(n)"), max_batch=64, dtype=jnp.int32, real=True))
def test_arguments_for_pmap_fits_the_devices(args: tuple[Any, ...]) -> None:
    (x,) = args
    assert isinstance(x, jax.Array) and x.dtype == jnp.int32
    assert 1 <= x.shape[0] <= jax.device_count()


_MESH = cpu_mesh_or_none((4, 2), ("x", "y"), (jax.sharding.AxisType.Auto,) * 2)  # None with fewer: its tests skip


@pytest.mark.devices(8)
def test_check_against_jax_with_shard_map() -> None:
    P = jax.sharding.PartitionSpec
    matmul = ax.shard_map(
        lambda a, b: a @ b,
        mesh=_MESH,
        in_specs=(P("x", None), P(None, "y")),
        out_specs=P("x", "y"),
        signature="(n,k),(k,m)->(n,m)",
    )
    check_against_jax(matmul, max_examples=10)
    gathered = ax.shard_map(
        lambda a: jax.lax.all_gather(a, "x"),
        mesh=_MESH,
        in_specs=P("x"),
        out_specs=P(None, "x"),
        signature="(n)->(x,n)",
        check_vma=False,
    )
    check_against_jax(gathered, max_examples=10)  # the mesh axis 'x' as a dimension: its size, 4
    liar = ax.shard_map(lambda a: a.sum(0), mesh=_MESH, in_specs=P("x"), out_specs=P("x"), signature="(n,k)->(n,k)")
    with pytest.raises(AssertionError, match="predicted shapes differ from JAX's"):
        check_against_jax(liar, max_examples=10)


@settings(max_examples=20)
@given(
    axst.arguments_for(
        ax.shard_map(
            lambda a, b: a,
            mesh={"x": 64},
            in_specs=(jax.sharding.PartitionSpec("x"), None),
            out_specs=jax.sharding.PartitionSpec("x"),
            signature="(n,k),(m)->(n,k)",
        )
    )
)
def test_arguments_for_shard_map_grows_blocks_by_their_specs(args: tuple[Any, ...]) -> None:
    a, b = (x.shape for x in args)
    assert a[0] % 64 == 0 and 1 <= a[0] // 64 <= 4  # blocks of 1..4 rows on each of 64 devices
    assert 1 <= b[0] <= 4  # in_specs None: passed whole


def test_tuple_outputs_compare_leaf_by_leaf() -> None:
    pred = assert_predicts_jax(ax.vmap(lambda a: (a, a.sum())), (3, 4))
    assert pred is not None and pred.shapes == ((3, 4), (3,))
    check_against_jax(ax.vmap(lambda a: (a, a.sum()), signature="(n)->(n),()"), max_examples=5)


def test_check_against_jax_shard_map_of_vmap_and_planned_meshes() -> None:
    P = jax.sharding.PartitionSpec

    def mm(a: jax.Array, b: jax.Array) -> jax.Array:
        return a @ b

    mesh8 = cpu_mesh((8,), ("x",), (jax.sharding.AxisType.Auto,))
    inner = ax.vmap(mm, in_axes=(0, None), signature="(n,k),(k,m)->(n,m)")
    check_against_jax(ax.shard_map(inner, mesh=mesh8, in_specs=(P("x"), P()), out_specs=P("x")), max_examples=10)
    planned = ax.shard_map(mm, mesh={"x": 64}, in_specs=(P("x"), P()), out_specs=P("x"), signature="(n,k),(k,m)->(n,m)")
    check_against_jax(planned, max_examples=5)  # predicts only: the real run is skipped


def test_keyword_only_parameters_are_refused_clearly() -> None:
    with pytest.raises(ax.SpecError, match="keyword-only \\['b'\\]"):
        check_against_jax(ax.check(lambda a, *, b: a * b, signature="(k),(k)->(k)"))
