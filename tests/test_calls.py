"""Checked calls: same results as jax.vmap, checks once per trace, composition, caches."""

from __future__ import annotations

import threading
from typing import Annotated, Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import axischeck as ax
from axischeck._debug import predictor_of
from axischeck._engine._predictor import Predictor

EINSUM = "(a,b),(b,c),(a,c)->(a,c)"


def complex_operation(x: jax.Array, y: jax.Array, z: jax.Array) -> jax.Array:
    return jnp.einsum("ab,bc->ac", x, y) + z


def _args(seed: int = 0) -> tuple[jax.Array, jax.Array, jax.Array]:
    k1, k2, k3 = jax.random.split(jax.random.PRNGKey(seed), 3)
    return (
        jax.random.normal(k1, (16, 8, 4)),
        jax.random.normal(k2, (4, 16, 2)),
        jax.random.normal(k3, (16, 8, 2)),
    )


@pytest.fixture(params=[EINSUM, None], ids=["signature", "inferred"])
def batched(request: pytest.FixtureRequest) -> ax.Vmapped[[jax.Array, jax.Array, jax.Array], jax.Array]:
    return ax.vmap(complex_operation, in_axes=(0, 1, 0), signature=request.param)


@pytest.fixture(params=["eager", "jit", "vmap"])
def mode(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def test_same_result_as_jax_in_every_mode(batched: ax.Vmapped[..., jax.Array], mode: str) -> None:
    plain = jax.vmap(complex_operation, in_axes=(0, 1, 0))
    x, y, z = _args()
    if mode == "eager":
        np.testing.assert_array_equal(batched(x, y, z), plain(x, y, z))
    elif mode == "jit":
        np.testing.assert_array_equal(jax.jit(batched)(x, y, z), jax.jit(plain)(x, y, z))
    else:
        xs = jnp.stack([x, x + 1])
        np.testing.assert_allclose(
            jax.vmap(batched, in_axes=(0, None, None))(xs, y, z),
            jax.vmap(plain, in_axes=(0, None, None))(xs, y, z),
        )


def test_composes_with_jax_transforms(batched: ax.Vmapped[..., jax.Array]) -> None:
    plain = jax.vmap(complex_operation, in_axes=(0, 1, 0))
    x, y, z = _args(1)
    loss = lambda f: lambda x: f(x, y, z).sum()
    np.testing.assert_allclose(jax.grad(loss(batched))(x), jax.grad(loss(plain))(x))
    v1, g1 = jax.value_and_grad(loss(batched))(x)
    v2, g2 = jax.value_and_grad(loss(plain))(x)
    np.testing.assert_allclose(v1, v2, rtol=1e-6)
    np.testing.assert_allclose(g1, g2)
    assert jax.jacrev(lambda x: batched(x, y, z))(x).shape == (16, 8, 2, 16, 8, 4)
    assert jax.eval_shape(batched, x, y, z).shape == (16, 8, 2)
    remat = jax.checkpoint(lambda x: batched(x, y, z))
    np.testing.assert_allclose(remat(x), plain(x, y, z))

    def step(carry: jax.Array, xi: jax.Array) -> tuple[jax.Array, jax.Array]:
        return carry + batched(xi, y, z).sum(), carry

    xs = jnp.stack([x, x])
    total, _ = jax.lax.scan(step, jnp.float32(0), xs)
    np.testing.assert_allclose(total, 2 * plain(x, y, z).sum(), rtol=1e-5)


def test_checks_run_once_per_trace_under_jit(monkeypatch: pytest.MonkeyPatch) -> None:
    traces = []

    def f(x: jax.Array) -> jax.Array:
        traces.append(x.shape)
        return x * 2

    checked = ax.vmap(f, signature="(n)->(n)")
    predictions = []
    original = Predictor.checked_answer

    def counting(*a: Any, **k: Any) -> ax.Prediction:
        predictions.append(1)
        return original(*a, **k)

    monkeypatch.setattr(Predictor, "checked_answer", counting)
    jitted = jax.jit(checked)
    for _ in range(5):
        jitted(jnp.ones((4, 3)))
    assert len(traces) == 1 and len(predictions) == 1
    jitted(jnp.ones((5, 3)))  # a new shape: one more trace, one more check
    assert len(traces) == 2 and len(predictions) == 2


def test_errors_are_raised_at_trace_time_under_jit() -> None:
    f = jax.jit(ax.vmap(complex_operation, in_axes=(0, 1, 0), signature=EINSUM))
    with pytest.raises(ax.ArgumentError, match="'b' disagrees"):
        f(jnp.ones((16, 8, 4)), jnp.ones((5, 16, 2)), jnp.ones((16, 8, 2)))


def test_passthrough_keeps_numpy_output_type() -> None:
    out = ax.vmap(lambda a: a)(np.ones((3, 2)))
    assert isinstance(out, np.ndarray)


def test_a_call_with_nothing_to_check_is_jaxs_own_and_builds_nothing() -> None:
    """A vmap of a plain function whose annotations declare no dims, without a signature or
    an axis name, has nothing to check before JAX runs: the call is JAX's, and the shared
    predictor is found only when something asks for it. Annotations that declare dims are
    still checked before JAX runs."""

    def typed(x: jax.Array) -> jax.Array:
        return x * 2

    def dims(x: Annotated[jax.Array, "n"], y: Annotated[jax.Array, "n"]) -> jax.Array:
        return x.sum() + y.sum()  # JAX runs it happily on sizes its annotations rule out

    x = jnp.ones((2, 3))
    for fun in (lambda v: v * 2, typed):
        f = ax.vmap(fun)
        assert np.array_equal(np.asarray(f(x)), np.asarray(jax.vmap(fun)(x)))
        assert predictor_of(f, make=False) is None  # no predictor was needed
        assert f.predict(x).shapes == (2, 3) and predictor_of(f, make=False) is not None
    with pytest.raises(ax.ArgumentError, match="dimension 'n' disagrees"):  # the annotations' own check
        ax.vmap(dims)(x, jnp.ones((2, 4)))


def test_decorator_forms() -> None:
    @ax.vmap
    def double(x: jax.Array) -> jax.Array:
        return 2 * x

    @ax.vmap(in_axes=(0, None))
    def scale(x: Annotated[jax.Array, "n"], s: Annotated[jax.Array, ""]) -> Annotated[jax.Array, "n"]:
        return x * s

    assert double(jnp.ones((3, 2))).shape == (3, 2)
    assert scale.predict((4, 5), ()).shapes == (4, 5)
    assert scale(jnp.ones((4, 5)), jnp.float32(2)).shape == (4, 5)
    assert scale.__name__ == "scale" and scale.__wrapped__ is not None


def test_methods_and_partial() -> None:
    import functools

    class Layer:
        def __init__(self) -> None:
            self.w = jnp.ones((3, 2))

        def apply(self, x: jax.Array) -> jax.Array:
            return x @ self.w

    layer = Layer()
    f = ax.vmap(layer.apply, signature="(i)->(o)")
    assert f(jnp.ones((5, 3))).shape == (5, 2)
    # A partial's bound keywords are closed over, not passed to vmap: z stays unmapped.
    part = functools.partial(complex_operation, z=jnp.ones((8, 2)))
    g = ax.vmap(part, in_axes=(0, 1))
    x, y, _ = _args()
    np.testing.assert_array_equal(g(x, y), jax.vmap(part, in_axes=(0, 1))(x, y))
    assert g.predict(x, y).shapes == (16, 8, 2)
    # Passed at call time, a keyword is always mapped over axis 0.
    h = ax.vmap(complex_operation, in_axes=(0, 1))
    with pytest.raises(ax.ArgumentError, match="size 8 at axis 0 of z"):
        h.predict(x, y, z=jnp.ones((8, 2)))


def test_prediction_cache_is_bounded_and_thread_safe() -> None:
    f = ax.vmap(lambda x, y: x + y, signature="(n),(n)->(n)")
    errors: list[BaseException] = []

    def work(offset: int) -> None:
        try:
            for i in range(300):
                b, n = 1 + (i + offset) % 7, 1 + (i * 3 + offset) % 5
                assert f.predict((b, n), (b, n)).shapes == (b, n)
                if i % 11 == 0:
                    with pytest.raises(ax.ArgumentError):
                        f.predict((b, n), (b, n + 1))
        except BaseException as err:
            errors.append(err)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not errors
    for i in range(2000):
        f.predict((1, i + 1), (1, i + 1))
    stored = predictor_of(f).stored()
    assert stored.predictions == stored.capacity


def test_fast_path_and_full_engine_agree() -> None:
    f = ax.vmap(ax.vmap(complex_operation, in_axes=(0, 1, 0), signature=EINSUM), in_axes=(2, 0, None), out_axes=1)
    args = (
        jax.ShapeDtypeStruct((16, 8, 7, 4), jnp.float32),
        jax.ShapeDtypeStruct((7, 4, 16, 2), jnp.float32),
        jax.ShapeDtypeStruct((16, 8, 2), jnp.float32),
    )
    fast = f.predict(*args)
    full = predictor_of(f).derive(args, {})
    assert fast == full and fast.shapes == (16, 7, 8, 2)
    assert str(fast) == str(full)


def test_decorated_methods_bind_self_like_jax_vmap() -> None:
    class Layer:
        def __init__(self) -> None:
            self.w = jnp.arange(6.0).reshape(3, 2)

        @ax.vmap(in_axes=(None, 0))
        def apply(self, x: Annotated[jax.Array, "i"]) -> Annotated[jax.Array, "o"]:
            return x @ self.w

        @staticmethod
        @ax.vmap
        def norm(x: jax.Array) -> jax.Array:
            return jnp.linalg.norm(x)

    layer = Layer()
    xs = jnp.ones((5, 3))
    np.testing.assert_array_equal(layer.apply(xs), jax.vmap(lambda x: x @ layer.w)(xs))
    assert layer.apply.predict((5, 3)).shapes == (5, 2)
    assert "x     (5, 3)" in layer.apply.explain((5, 3))
    assert Layer.apply.predict(layer, (5, 3)).shapes == (5, 2)
    assert layer.norm(xs).shape == (5,)
    # 'o' is bound by no input, so the output comes from a trace, and the function's own
    # error (w is (3, 2), x is (4,)) passes through untouched.
    with pytest.raises(TypeError, match="dot_general requires contracting dimensions"):
        layer.apply(jnp.ones((5, 4)))


def test_prediction_is_read_only() -> None:
    pred = ax.vmap(lambda x: x).predict((3,))
    with pytest.raises(AttributeError):
        pred.shapes = (4,)  # type: ignore[misc]


@pytest.mark.parametrize("signature", [None, {"x": "b", "n": None, "return": "b"}])
def test_static_argnums_under_jit(signature: object) -> None:
    def f(x: jax.Array, n: int) -> jax.Array:
        return x * n

    checked = jax.jit(ax.vmap(f, in_axes=(0, None), signature=signature), static_argnums=1)  # type: ignore[arg-type]
    plain = jax.jit(jax.vmap(f, in_axes=(0, None)), static_argnums=1)
    x = jnp.arange(12.0).reshape(4, 3)
    np.testing.assert_array_equal(checked(x, 3), plain(x, 3))


@pytest.mark.parametrize("signature", [EINSUM, None], ids=["signature", "inferred"])
def test_jit_compiles_to_exactly_what_jax_vmap_compiles(signature: str | None) -> None:
    """Zero steady-state cost under jit, shown structurally: the lowered programs are identical."""
    x, y, z = _args()
    checked = jax.jit(ax.vmap(complex_operation, in_axes=(0, 1, 0), signature=signature))
    plain = jax.jit(jax.vmap(complex_operation, in_axes=(0, 1, 0)))
    assert checked.lower(x, y, z).as_text() == plain.lower(x, y, z).as_text()


@pytest.mark.parametrize(
    "keys",
    [jax.random.split(jax.random.key(0), 4), jax.random.split(jax.random.PRNGKey(0), 4)],
    ids=["typed-keys", "raw-keys"],
)
def test_prng_keys_are_mapped_like_arrays(keys: jax.Array) -> None:
    f = ax.vmap(lambda k: jax.random.normal(k, (2,)))
    assert f.predict(keys).shapes == (4, 2)
    np.testing.assert_array_equal(f(keys), jax.vmap(lambda k: jax.random.normal(k, (2,)))(keys))


@pytest.mark.parametrize(
    ("fun", "summary"),
    [
        (lambda x: (x, x.sum()), "((7, 3), (7,))"),
        (lambda x: {"a": x, "b": [x.sum()]}, "{'a': (7, 3), 'b': [(7,)]}"),
        (lambda x: x, "(7, 3)"),
    ],
    ids=["tuple", "dict", "array"],
)
def test_explain_summarises_outputs_as_tuples(fun: Any, summary: str) -> None:
    first = ax.vmap(fun).explain(jnp.ones((7, 3))).splitlines()[0]
    assert first == f"vmap(<lambda>, in_axes=0, out_axes=0) -> {summary}"
