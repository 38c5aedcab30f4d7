"""`axischeck.nnx`: Flax NNX's vmap / pmap, checked, against Flax's own."""

from __future__ import annotations

import doctest
import re
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

nnx = pytest.importorskip("flax.nnx", reason="Flax is not installed (the `flax` extra)")

import axischeck as ax  # noqa: E402
import axischeck.nnx as axnnx  # noqa: E402
from jax_oracle import outcome, same_outcome  # noqa: E402


def apply(model: Any, x: jax.Array) -> jax.Array:
    return model(x)  # type: ignore[no-any-return]


def _ensemble(members: int, width: int, out: int) -> Any:
    @nnx.split_rngs(splits=members)
    @nnx.vmap(in_axes=(0,), out_axes=0)
    def make(rngs: Any) -> Any:
        return nnx.Linear(width, out, rngs=rngs)

    return make(nnx.Rngs(0))


PARAMS_ONLY = nnx.StateAxes({nnx.Param: 0, ...: None})


@given(
    width=st.integers(1, 4),
    out=st.integers(1, 3),
    feature=st.integers(1, 4),
    batch=st.integers(1, 4),
    members=st.integers(1, 4),
    in_axes=st.sampled_from([(None, 0), (None, 1), (PARAMS_ONLY, None), (PARAMS_ONLY, 0), (0, 0), 0]),
    out_axes=st.sampled_from([0, 1, -1]),
    x_batch_axis=st.integers(0, 1),
    ensemble=st.booleans(),
)
def test_vmap_matches_flax(
    width: int,
    out: int,
    feature: int,
    batch: int,
    members: int,
    in_axes: Any,
    out_axes: Any,
    x_batch_axis: int,
    ensemble: bool,
) -> None:
    """Same values, or the same exception type, as `flax.nnx.vmap` on drawn models, axes
    and shapes; a successful call's shape is what `predict` said."""
    model = _ensemble(members, width, out) if ensemble else nnx.Linear(width, out, rngs=nnx.Rngs(0))
    x = jax.random.normal(jax.random.key(1), (batch, feature) if x_batch_axis == 0 else (feature, batch))
    theirs = outcome(lambda: nnx.vmap(apply, in_axes=in_axes, out_axes=out_axes)(model, x))
    wrapped = axnnx.vmap(apply, in_axes=in_axes, out_axes=out_axes)
    ours = outcome(lambda: wrapped(model, x))
    same_outcome(ours, theirs)
    prediction = outcome(lambda: wrapped.predict(model, x))
    if theirs[0] == "ok":
        assert prediction[0] == "ok", prediction
        assert prediction[1].shapes == theirs[1].shape
    else:
        assert prediction[0] == "err" and isinstance(prediction[1], ax.AxisCheckError), prediction


def test_state_axes_mistake_is_named_in_the_users_terms() -> None:
    ensemble = _ensemble(4, 3, 2)
    f = axnnx.vmap(apply, in_axes=(PARAMS_ONLY, 0))
    with pytest.raises(ax.AxisCheckError) as info:
        f(ensemble, jnp.ones((5, 3)))
    message = str(info.value)
    assert message.startswith("nnx.vmap(apply, in_axes=(StateAxes({Param: 0, ...: None}), 0)")
    assert "model['kernel']" in message and "size 5 at axis 0 of x" in message
    assert "Fix: in_axes=(StateAxes({Param: 0, ...: None}), None)" in message
    assert axnnx.vmap(apply, in_axes=(PARAMS_ONLY, None))(ensemble, jnp.ones(3)).shape == (4, 2)


def test_flax_4589_split_rngs_gives_distinct_members() -> None:
    """Flax #4589: members made under split_rngs differ (so do their dropout masks)."""

    class Block(nnx.Module):  # type: ignore[misc]
        def __init__(self, rngs: Any) -> None:
            self.linear = nnx.Linear(3, 3, rngs=rngs)
            self.dropout = nnx.Dropout(0.5, rngs=rngs)

        def __call__(self, x: jax.Array) -> jax.Array:
            return self.dropout(self.linear(x))  # type: ignore[no-any-return]

    @nnx.split_rngs(splits=3)
    @axnnx.vmap(in_axes=(0,), out_axes=0)
    def make(rngs: Any) -> Any:
        return Block(rngs)

    blocks = make(nnx.Rngs(0, dropout=1))
    kernels = blocks.linear.kernel[...]
    assert kernels.shape == (3, 3, 3)
    assert not np.array_equal(kernels[0], kernels[1])


def test_decorator_forms_and_pmap() -> None:
    @axnnx.vmap
    def double(x: jax.Array) -> jax.Array:
        return x * 2

    @axnnx.vmap(in_axes=1)
    def double1(x: jax.Array) -> jax.Array:
        return x * 2

    assert double(jnp.ones((3, 2))).shape == (3, 2)
    assert double1(jnp.ones((3, 2))).shape == (2, 3)
    n = jax.local_device_count()
    x = jnp.arange(n * 2.0).reshape(n, 2)
    ours = axnnx.pmap(lambda x: jax.lax.psum(x, "i"), axis_name="i")
    np.testing.assert_array_equal(ours(x), nnx.pmap(lambda x: jax.lax.psum(x, "i"), axis_name="i")(x))
    with pytest.raises(ValueError, match=r"nnx\.pmap"):
        ours(jnp.ones((n + 1, 2)))


def test_patch_routes_flax_and_unpatch_restores() -> None:
    original = nnx.vmap
    with ax.patch():
        assert nnx.vmap is axnnx.vmap and nnx.pmap is axnnx.pmap
        with pytest.raises(ax.AxisCheckError, match=r"m\['kernel'\]"):
            nnx.vmap(lambda m, x: m(x), in_axes=(None, 0))(nnx.Linear(3, 2, rngs=nnx.Rngs(0)), jnp.ones((5, 4)))
    assert nnx.vmap is original


@pytest.mark.parametrize("name", axnnx.__all__)
def test_docstring_examples(name: str) -> None:
    doc = re.sub(r"^[ \t]*```.*$", "", getattr(axnnx, name).__doc__ or "", flags=re.MULTILINE)
    test = doctest.DocTestParser().get_doctest(doc, {"ax": ax, "jax": jax, "jnp": jnp}, name, None, 0)
    assert test.examples, f"{name} has no example"
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    runner.run(test)
    assert runner.failures == 0


def test_trace_counts_and_state_updates_match_flax() -> None:
    counts = {"ours": 0, "theirs": 0}

    def make(which: str) -> Any:
        def f(m: Any, x: jax.Array) -> jax.Array:
            counts[which] += 1
            return m(x)  # type: ignore[no-any-return]

        return f

    model, x = nnx.Linear(3, 2, rngs=nnx.Rngs(0)), jnp.ones((5, 3))
    ours = nnx.jit(axnnx.vmap(make("ours"), in_axes=(None, 0)))
    theirs = nnx.jit(nnx.vmap(make("theirs"), in_axes=(None, 0)))
    for _ in range(3):
        np.testing.assert_array_equal(ours(model, x), theirs(model, x))
    assert counts["ours"] == counts["theirs"]

    class Counter(nnx.Module):  # type: ignore[misc]
        def __init__(self) -> None:
            self.n = nnx.BatchStat(jnp.zeros(()))

        def __call__(self, x: jax.Array) -> jax.Array:
            self.n[...] += 1
            return x

    a, b = Counter(), Counter()
    axnnx.vmap(lambda c, x: c(x), in_axes=(None, 0))(a, x)
    nnx.vmap(lambda c, x: c(x), in_axes=(None, 0))(b, x)
    assert a.n[...] == b.n[...] == 1


@pytest.mark.slow
def test_flax_imported_while_patched_is_routed() -> None:
    import subprocess
    import sys

    code = (
        "import jax, axischeck as ax; ax.patch()\n"
        "from flax import nnx\n"
        "import axischeck.nnx as axnnx\n"
        "print(nnx.vmap is axnnx.vmap, nnx.pmap is axnnx.pmap)\n"
        "ax.unpatch(); print(nnx.vmap is axnnx.vmap)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=300)
    assert out.stdout.split() == ["True", "True", "False"]


def test_in_axes_that_do_not_fit_the_arguments_fail_as_in_flax() -> None:
    """In the spirit of Flax #4355 (a docs example failing deep inside nnx.vmap): in_axes of
    the wrong length fail as Flax fails; a rank mistake is named by the argument."""
    model = nnx.Linear(2, 3, rngs=nnx.Rngs(0))
    for args in [(model, jnp.ones((5, 2)), jnp.ones(5)), (jnp.ones((5, 2)),)]:
        same_outcome(
            outcome(lambda args=args: axnnx.vmap(lambda *a: a[0], in_axes=(None, 0))(*args)),
            outcome(lambda args=args: nnx.vmap(lambda *a: a[0], in_axes=(None, 0))(*args)),
        )
    with pytest.raises(ValueError, match=r"x has shape \(\) of rank 0"):
        axnnx.vmap(apply, in_axes=(None, 0))(model, jnp.ones(()))


def test_predict_of_a_call_flax_runs_unchecked_says_so_as_an_axischeck_error() -> None:
    """A function returning a module is passed to Flax unchecked; its `predict` is a
    clear `SpecError`, not an internal exception."""
    model = nnx.Linear(3, 2, rngs=nnx.Rngs(0))
    wrapped = axnnx.vmap(lambda m, x: m, in_axes=(None, 0), out_axes=None)
    with pytest.raises(ax.SpecError, match="does not model this call"):
        wrapped.predict(model, jnp.ones((4, 3)))
