"""User code that must pass `mypy --strict`: axischeck keeps every type it wraps.

Type-checked only (`mypy --strict src tests/typing`); pytest does not collect it (no
`test_` prefix). The `assert_type` calls are the assertions: each proves that a
decorator kept the wrapped function's parameter or return types.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Annotated, Any, assert_type

import jax
import jax.numpy as jnp

import axischeck as ax

Array = jax.Array

# --------------------------------------------------------------- plain functions


def complex_operation(x: Array, y: Array, z: Array) -> Array:
    return jnp.einsum("ab,bc->ac", x, y) + z


def scale(x: Array, factor: float) -> Array:
    return x * factor


# `ax.vmap(f, ...)` with and without a signature. A decorated function keeps its
# parameter names too (mypy shows `Vmapped[[Arg(Array, 'x'), ...], Array]`), so the
# exact wrapper type is asserted for a positional-only function below; for the
# others the calls in `main` assert the return type, and misuse_*.py prove that the
# parameter types are enforced (not erased to `(*Any, **Any) -> Any`).
einsum_v = ax.vmap(complex_operation, in_axes=(0, 1, 0), signature="(a,b),(b,c),(a,c)->(a,c)")
_einsum_v_t: Callable[[Array, Array, Array], Array] = einsum_v
inferred_v = ax.vmap(complex_operation, in_axes=(0, 1, 0), out_axes=0)
_inferred_v_t: Callable[[Array, Array, Array], Array] = inferred_v
# Every jax.vmap parameter, by keyword.
full_v = ax.vmap(
    scale,
    in_axes=(0, None),
    out_axes=0,
    axis_name="batch",
    axis_size=16,
    spmd_axis_name=None,
    sum_match=False,
    signature="a b, -> a b",
)
_full_v_t: Callable[[Array, float], Array] = full_v


def positional(x: Array, w: Array, /) -> Array:
    return x @ w


assert_type(ax.vmap(positional, in_axes=(0, None)), ax.Vmapped[[Array, Array], Array])
assert_type(ax.check(positional, signature="a b, b c -> a c"), ax.Checked[[Array, Array], Array])
assert_type(ax.vmap(in_axes=(0, None))(positional), ax.Vmapped[[Array, Array], Array])
assert_type(ax.vmap(ax.vmap(positional)), ax.Vmapped[[Array, Array], Array])
# The other signature forms `signature=` accepts.
tuple_sig_v = ax.vmap(complex_operation, in_axes=(0, 1, 0), signature=("a b", "b c", "a c"))
sig_obj_v = ax.vmap(complex_operation, in_axes=(0, 1, 0), signature=ax.Signature("(a,b),(b,c),(a,c)->(a,c)"))

# --------------------------------------------------------- decorated functions


@ax.vmap
def row_norm(x: Annotated[Array, "n"]) -> Annotated[Array, ""]:
    return jnp.sqrt(jnp.sum(x * x))


@ax.vmap(in_axes=(0, None))
def project(x: Annotated[Array, "i"], w: Annotated[Array, "i o"]) -> Annotated[Array, "o"]:
    return x @ w


@ax.vmap(in_axes=(0, None), signature="(a,b),()->(a,b)")
def shift(x: Array, by: float = 1.0) -> Array:
    return x + by


Params = dict[str, Array]


@ax.vmap(in_axes=(None, 0))
def dense(params: Annotated[Params, {"W": "o i", "b": "o"}], x: Annotated[Array, "i"]) -> Annotated[Array, "o"]:
    return params["W"] @ x + params["b"]


_row_norm_t: Callable[[Array], Array] = row_norm
_project_t: Callable[[Array, Array], Array] = project
_dense_t: Callable[[Params, Array], Array] = dense

# `@ax.check`, called and bare.
forward = ax.check(lambda X, W: X @ W, signature="n f, f o -> n o")


@ax.check(signature="(n,f),(f,o)->(n,o)")
def linear(X: Array, W: Array) -> Array:
    return X @ W


@ax.check
def outer(u: Annotated[Array, "a"], v: Annotated[Array, "b"]) -> Annotated[Array, "a b"]:
    return jnp.outer(u, v)


_linear_t: Callable[[Array, Array], Array] = linear
_outer_t: Callable[[Array, Array], Array] = outer

# -------------------------------------------------------------------- methods


@ax.vmap(in_axes=(None, 0), signature="o i, i -> o")
def batched_apply(w: Array, x: Array) -> Array:
    return w @ x


class Model:
    """A decorated function used inside a class, and a decorated staticmethod."""

    def __init__(self, w: Array) -> None:
        self.w = w
        self.per_call = ax.vmap(self._forward, in_axes=0)  # a bound method, wrapped

    def _forward(self, x: Annotated[Array, "i"]) -> Annotated[Array, "o"]:
        return self.w @ x

    @staticmethod
    @ax.vmap(in_axes=(0, 0))
    def pairwise(a: Annotated[Array, "d"], b: Annotated[Array, "d"]) -> Annotated[Array, ""]:
        return jnp.dot(a, b)

    def __call__(self, xs: Array) -> Array:
        out = batched_apply(self.w, xs)
        assert_type(out, Array)
        assert_type(self.per_call(xs), Array)
        # Through the class: mypy applies a wrapper's __get__ even under @staticmethod.
        assert_type(Model.pairwise(xs, xs), Array)
        return out


_Model_pairwise_t: Callable[[Array, Array], Array] = Model.pairwise


class Layer:
    """A decorated method binds `self` like a plain function."""

    def __init__(self, w: Array) -> None:
        self.w = w

    @ax.vmap(in_axes=(None, 0))
    def apply(self, x: Annotated[Array, "i"]) -> Annotated[Array, "o"]:
        return x @ self.w


def use_layer(layer: Layer, xs: Array) -> Array:
    assert_type(layer.apply(xs), Array)
    pred: ax.Prediction = layer.apply.predict(xs)
    assert pred.shapes is not None
    return layer.apply(xs)


# -------------------------------------------------------------- composition

nested = ax.vmap(ax.vmap(complex_operation, in_axes=(0, 1, 0)), in_axes=0)
_nested_t: Callable[[Array, Array, Array], Array] = nested
nested_decorated = ax.vmap(row_norm)
_nested_decorated_t: Callable[[Array], Array] = nested_decorated
jitted = jax.jit(ax.vmap(positional, in_axes=(0, None)))  # jax.jit's wrapper returns Any
checked_inside_vmap = ax.vmap(linear, in_axes=(0, None))
_checked_inside_vmap_t: Callable[[Array, Array], Array] = checked_inside_vmap

# A decorated function is still a `Callable` with its own parameter types.
as_callable: Callable[[Array, Array, Array], Array] = einsum_v
as_callable_2: Callable[[Array, float], Array] = shift


def apply_twice(f: Callable[[Array], Array], x: Array) -> Array:
    return f(f(x))


# --------------------------------------------------------------- signatures

batched_sig = ax.Signature("(a,b),(b,c),(a,c)->(a,c)").vmap(in_axes=(0, 1, 0))
assert_type(batched_sig, ax.Signature)
twice = batched_sig.vmap(0, 0, axis_size=3, axis_name="outer")
assert_type(twice, ax.Signature)
pytree_sig = ax.Signature(({"W": "o i", "b": "o"}, "i"), output="o")
assert_type(pytree_sig.predict({"W": (4, 3), "b": (4,)}, (3,)), ax.Prediction)
assert_type(str(batched_sig), str)
assert_type(batched_sig.num_inputs, int)


# -------------------------------------------------------------------- calls


def main() -> None:
    key = jax.random.key(0)
    x = jax.random.normal(key, (16, 8, 4))
    y = jax.random.normal(key, (4, 16, 2))
    z = jax.random.normal(key, (16, 8, 2))

    # Calls keep the return type.
    assert_type(einsum_v(x, y, z), Array)
    assert_type(inferred_v(x, y, z), Array)
    assert_type(ax.vmap(complex_operation)(x=x, y=x[:, 0, :, None], z=x), Array)  # by name
    assert_type(full_v(x, 2.0), Array)
    assert_type(tuple_sig_v(x, y, z), Array)
    assert_type(sig_obj_v(x, y, z), Array)
    assert_type(row_norm(x[:, :, 0]), Array)
    assert_type(project(x[:, 0, :], jnp.ones((4, 3))), Array)
    assert_type(shift(x, 2.0), Array)
    assert_type(shift(x, 2), Array)  # an int is a float
    params: Params = {"W": jnp.ones((5, 4)), "b": jnp.zeros((5,))}
    assert_type(dense(params, x[:, 0, :]), Array)
    assert_type(nested(jnp.ones((3, 16, 8, 4)), jnp.ones((3, 4, 16, 2)), jnp.ones((3, 16, 8, 2))), Array)
    assert_type(nested_decorated(jnp.ones((3, 16, 8))), Array)
    assert_type(linear(jnp.ones((32, 20)), jnp.ones((20, 1))), Array)
    assert_type(outer(jnp.ones(3), jnp.ones(4)), Array)
    assert_type(apply_twice(ax.vmap(jnp.tanh), x), Array)
    model = Model(jnp.ones((5, 4)))
    assert_type(model(x[:, 0, :]), Array)
    assert_type(Model.pairwise(x[:, 0, :], x[:, 1, :]), Array)
    jitted_out: Array = jitted(x, jnp.ones((4, 3)))
    forward_out = forward(jnp.ones((32, 20)), jnp.ones((20, 1)))
    del jitted_out, forward_out

    # Prediction, with arrays, shape tuples and pytrees as arguments.
    pred = einsum_v.predict(x, y, z)
    assert_type(pred, ax.Prediction)
    shapes = pred.shapes  # a pytree shaped like the output: leaves are ax.Shape
    if isinstance(shapes, ax.Shape):
        assert_type(shapes, ax.Shape)
        rank: int = shapes.rank
        dims: tuple[int, ...] = shapes
        del rank, dims
    size = pred.axis_size
    assert_type(size, int | None)
    if size is not None:
        assert_type(size, int)
    assert_type(str(pred), str)
    assert_type(len(pred.steps), int)
    assert_type(inferred_v.predict((16, 8, 4), (4, 16, 2), (16, 8, 2)), ax.Prediction)
    assert_type(dense.predict({"W": (5, 4), "b": (5,)}, (16, 4)), ax.Prediction)
    assert_type(linear.predict((32, 20), (20, 1)).axis_size, int | None)
    assert_type(batched_sig.predict((16, 8, 4), (4, 16, 2), (16, 8, 2)), ax.Prediction)

    # Explanations are text.
    assert_type(einsum_v.explain(x, y, z), str)
    assert_type(nested.explain((3, 16, 8, 4), (3, 4, 16, 2), (3, 16, 8, 2)), str)
    assert_type(outer.explain((3,), (4,)), str)

    # Failures are AxisCheckErrors, which are ValueErrors.
    bad_y = jnp.ones((5, 16, 2))
    try:
        einsum_v(x, bad_y, z)
    except ax.AxisCheckError as err:
        assert_type(err, ax.AxisCheckError)
        message: str = str(err)
        problem: str = err.problem
        symbol: str | None = err.symbol
        where: list[str] = [p.arg for p in err.places]
        fix: str | None = err.fix
        as_value_error: ValueError = err
        del message, problem, symbol, where, fix, as_value_error
    try:
        einsum_v.predict(x, bad_y, z)
    except ax.ArgumentError as arg_err:
        assert_type(arg_err.places, tuple[ax.Place, ...])
    except ax.SpecError as spec_err:
        as_type_error: TypeError = spec_err
        del as_type_error


if __name__ == "__main__":
    main()


# ------------------------------------------------------------------ jaxtyping

from typing import Generic, NamedTuple, TypeVar  # noqa: E402

from hypothesis import given  # noqa: E402
from jaxtyping import Float, Int, PyTree  # noqa: E402

import axischeck.strategies as axst  # noqa: E402
from axischeck.testing import assert_predicts_jax, check_against_jax  # noqa: E402


@ax.vmap(in_axes=(0, None))
def jt_project(x: Float[Array, " i"], w: Float[Array, "i o"]) -> Float[Array, " o"]:
    return x @ w


@ax.check
def jt_take(x: Float[Array, "n d"], i: Int[Array, ""]) -> Float[Array, " d"]:
    return x[i]


@ax.vmap
def jt_tree_norm(p: PyTree[Float[Array, " n"]]) -> Float[Array, ""]:
    return jnp.sqrt(sum((jnp.sum(v * v) for v in jax.tree_util.tree_leaves(p)), jnp.zeros(())))


_jt_project_t: Callable[[Array, Array], Array] = jt_project
_jt_take_t: Callable[[Array, Array], Array] = jt_take


# --------------------------------------------------- pytree parameters, jit, pmap


Leaf = TypeVar("Leaf")


class DenseParams(NamedTuple, Generic[Leaf]):
    """Generic in its leaves, so the same class spells the values and their dims (a
    plain tuple spec would not match: JAX's prefix rules tell a NamedTuple from a tuple)."""

    W: Leaf
    b: Leaf


@ax.vmap(in_axes=(None, 0))
def dense_nt(
    p: Annotated[DenseParams[Array], DenseParams("o i", "o")], x: Annotated[Array, "i"]
) -> Annotated[Array, "o"]:
    return p.W @ x + p.b


@jax.jit
@ax.vmap(in_axes=(0, None), signature="(i),(i,o)->(o)")
def jit_on_top(x: Array, w: Array) -> Array:  # jax.jit's JitWrapped: calls return Any
    return x @ w


@ax.pmap(axis_name="devices")
def centred(x: Annotated[Array, "n"]) -> Annotated[Array, "n"]:
    # (jax.lax's collectives are untyped in jax 0.10: mypy --strict flags any call to them)
    return x - x.mean()


class Encoder:
    """Decorated methods and a decorated nested transform in a model class."""

    def __init__(self, w: Array) -> None:
        self.w = w

    @ax.vmap(in_axes=(None, 0))
    def encode(self, x: Float[Array, " i"]) -> Float[Array, " o"]:
        return self.w @ x

    def encode_all(self, xs: Array) -> Array:
        over_groups = ax.vmap(self.encode)  # the bound, decorated method, mapped again
        assert_type(self.encode(xs), Array)
        return over_groups(xs[None])


# --------------------------------------------------- a user's property tests


def test_project_predicts_like_jax() -> None:
    check_against_jax(jt_project, max_examples=10)
    check_against_jax(jt_take, real_run=False, sizes={"d": 3}, dtype=(jnp.float32, jnp.int32))
    pred = assert_predicts_jax(jt_project, (8, 4), (4, 3))
    assert pred is None or pred.shapes == (8, 3)


@given(axst.arguments_for(jt_project, max_side=3))
def test_project_shapes(args: tuple[jax.ShapeDtypeStruct | Array, ...]) -> None:
    x, w = args
    assert_type(jt_project.predict(x, w), ax.Prediction)


def more_calls() -> None:
    x = jnp.ones((8, 4))
    assert_type(jt_project(x, jnp.ones((4, 3))), Array)
    assert_type(jt_take(x, jnp.array(2)), Array)
    assert_type(jt_tree_norm({"a": x, "b": x}), Array)
    params = DenseParams(jnp.ones((3, 4)), jnp.zeros(3))
    assert_type(dense_nt(params, x), Array)
    assert_type(dense_nt.predict(DenseParams((3, 4), (3,)), (8, 4)), ax.Prediction)  # shapes for arrays
    out: Array = jit_on_top(x, jnp.ones((4, 3)))
    assert_type(centred(jnp.ones((jax.device_count(), 5))), Array)
    assert_type(centred.predict_with_devices(64, (64, 5)), ax.Prediction)
    assert_type(Encoder(jnp.ones((3, 4))).encode_all(x), Array)
    del out


# --------------------------------------------------- shard_map

_ROWS = jax.sharding.PartitionSpec("data")  # type: ignore[no-untyped-call]  # untyped in jax 0.10


@ax.shard_map(mesh={"data": 64}, in_specs=(_ROWS, None), out_specs=_ROWS, signature="(n,i),(i,o)->(n,o)")
def sharded_layer(x: Array, w: Array) -> Array:
    return jnp.tanh(x @ w)


def planned_layer(x: Array, w: Array) -> Array:
    return x @ w


def shard_calls() -> None:
    pred = sharded_layer.predict((1024, 16), (16, 8))
    assert_type(pred, ax.ShardPrediction)
    blocks: Any = pred.block_shapes  # a pytree shaped like the output, like .shapes
    sizes: dict[str, int] = pred.mesh
    other = sharded_layer.predict_with_mesh({"data": 16}, (1024, 16), (16, 8))
    assert_type(other, ax.ShardPrediction)
    mapped = ax.shard_map(planned_layer, mesh={"data": 8}, in_specs=_ROWS, out_specs=_ROWS)
    typed: Callable[[Array, Array], Array] = mapped  # the parameters and result are kept
    assert_type(mapped(jnp.ones((8, 2)), jnp.ones((2, 3))), Array)
    shard: Any = ax.shard_shape((1024, 16), ({"data": 64}, _ROWS))
    del blocks, sizes, shard, typed


# --------------------------------------------------- functools.partial

# `@partial(jax.vmap, in_axes=...)` is how most JAX code passes options; the axischeck
# transforms keep the function's types through it too (under mypy with
# `plugins = ["axischeck.mypy_plugin"]`, as in pyproject.toml; pyright needs nothing).
# Positional-only functions let the exact wrapper type be asserted, as above.


@partial(ax.vmap, in_axes=(0, None))
def p_project(x: Array, w: Array, /) -> Array:
    return x @ w


assert_type(p_project, ax.Vmapped[[Array, Array], Array])


@partial(ax.vmap, in_axes=(0, None), out_axes=0, axis_name="batch", signature="(a),()->(a)")
def p_scale(x: Array, n: int) -> Array:
    return x * n


_p_scale_t: Callable[[Array, int], Array] = p_scale


@partial(ax.vmap, in_axes=(0, None))  # stacked: nested vmaps, each keeping the types
@partial(ax.vmap, in_axes=(0, None))
def p_nested(x: Array, w: Array, /) -> Array:
    return x @ w


assert_type(p_nested, ax.Vmapped[[Array, Array], Array])


@partial(ax.pmap, axis_name="devices")
def p_centred(x: Array, /) -> Array:
    return x - x.mean()


assert_type(p_centred, ax.Pmapped[[Array], Array])


@partial(ax.pmap, axis_name="devices", in_axes=(0, None, None), static_broadcasted_argnums=2)
def p_shift(x: Array, by: Array, times: int) -> Array:
    return x + by * times


_p_shift_t: Callable[[Array, Array, int], Array] = p_shift


@partial(ax.shard_map, mesh={"data": 64}, in_specs=(_ROWS, None), out_specs=_ROWS)
def p_sharded(x: Array, w: Array, /) -> Array:
    return jnp.tanh(x @ w)


assert_type(p_sharded, ax.ShardMapped[[Array, Array], Array])  # (a {name: size} mesh only predicts)


@partial(ax.check, signature="(n,f),(f,o)->(n,o)")
def p_linear(X: Array, W: Array, /) -> Array:
    return X @ W


assert_type(p_linear, ax.Checked[[Array, Array], Array])

# A partial kept and reused: as a decorator, called on a function, or called with no
# function (then it is the `@ax.vmap(in_axes=...)` decorator factory).
over_rows = partial(ax.vmap, in_axes=(0, None))
assert_type(over_rows(positional), ax.Vmapped[[Array, Array], Array])
assert_type(over_rows(positional, out_axes=0), ax.Vmapped[[Array, Array], Array])
assert_type(over_rows()(positional), ax.Vmapped[[Array, Array], Array])


@over_rows
def p_reused(x: Array, w: Array, /) -> Array:
    return x @ w


assert_type(p_reused, ax.Vmapped[[Array, Array], Array])


# Options unpacked from a dict are accepted (mypy cannot tell which parameters they
# fill, so the result is untyped there).
_vmap_options: dict[str, Any] = {"in_axes": (0, None)}


@partial(ax.vmap, **_vmap_options)
def p_unpacked(x: Array, w: Array) -> Array:
    return x @ w


class PartialLayer:
    """A partial-decorated method binds `self` like a plain function."""

    def __init__(self, w: Array) -> None:
        self.w = w

    @partial(ax.vmap, in_axes=(None, 0))
    def apply(self, x: Array) -> Array:
        return self.w @ x


def partial_calls() -> None:
    x = jnp.ones((8, 4))
    w = jnp.ones((4, 3))
    assert_type(p_project(x, w), Array)
    assert_type(p_scale(x, 2), Array)
    assert_type(p_nested(jnp.ones((2, 8, 4)), w), Array)
    assert_type(p_centred(jnp.ones((jax.device_count(), 5))), Array)
    assert_type(p_shift(jnp.ones((jax.device_count(), 3)), jnp.ones(3), 2), Array)
    assert_type(p_linear(x, w), Array)
    assert_type(p_reused(x, w), Array)
    unpacked: Array = p_unpacked(x, w)
    assert_type(PartialLayer(jnp.ones((3, 4))).apply(x), Array)
    # The wrapper is the axischeck one: it predicts and explains.
    assert_type(p_project.predict((8, 4), (4, 3)), ax.Prediction)
    assert_type(p_centred.predict_with_devices(8, (8, 5)), ax.Prediction)
    assert_type(p_sharded.predict((1024, 4), (4, 3)), ax.ShardPrediction)
    assert_type(p_scale.explain((8, 4), ()), str)
    del unpacked


def pmap_lowering_is_jax_own(x: jax.Array) -> str:
    """What JAX's transformed function carries is reached through the shell, for type
    checkers too (`.lower` is JAX's, as on `jax.pmap`'s untyped result)."""
    return str(ax.pmap(lambda v: v * 2).lower(x).as_text())
