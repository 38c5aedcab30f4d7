"""Warnings the user's function issues reach the user: axischeck's traces and checks swallow
none of them, in any transform, eagerly or under `jax.jit`, even when a check then fails.

(axischeck's own `AxisCheckWarning`s are tested with the behaviour they warn about.)
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import PartitionSpec as P

import axischeck as ax


def _warns(x: jax.Array) -> jax.Array:
    warnings.warn("a warning from the user's function", UserWarning, stacklevel=1)
    return x * 2


@pytest.mark.parametrize(
    "make",
    [
        lambda: ax.vmap(_warns, signature="(n)->(n)"),
        lambda: ax.vmap(_warns),
        lambda: ax.check(_warns, signature="b n -> b n"),
        lambda: jax.jit(ax.vmap(_warns, signature="(n)->(n)")),
        lambda: jax.jit(ax.vmap(_warns)),
        lambda: ax.vmap(ax.vmap(_warns), in_axes=1),
        lambda: ax.vmap(_warns, in_axes=None, out_axes=None, axis_size=2),
    ],
    ids=["signature", "traced", "check", "jit-signature", "jit-traced", "nested", "out_axes-none"],
)
def test_warnings_from_the_users_function_are_not_swallowed(make: Callable[[], Any]) -> None:
    f = make()
    x = jnp.ones((2, 3))
    with pytest.warns(UserWarning, match="a warning from the user's function") as record:
        out = f(x)
    assert out.shape == (2, 3) or out.shape == (3, 2)
    assert all(w.category is UserWarning for w in record)


def test_warnings_survive_a_failing_check() -> None:
    """A warning issued before the function's own error is still emitted."""

    def f(x: jax.Array) -> jax.Array:
        warnings.warn("about to fail", RuntimeWarning, stacklevel=1)
        return jnp.dot(x, jnp.ones(7))

    with pytest.warns(RuntimeWarning, match="about to fail"), pytest.raises(TypeError):
        ax.vmap(f)(jnp.ones((2, 3)))


def _summed_twice(x: jax.Array) -> jax.Array:
    return jax.lax.psum(jax.lax.psum(x, "i"), "i")  # axischeck: ignore[AX019] - the mistake under test


def test_a_psum_of_a_psum_over_the_same_axis_warns() -> None:
    """jax#19175: the outer psum multiplies the sum by the axis size, silently; the count
    idiom `psum(1, 'i')` (a constant, the same on every member) is meant and not warned of."""
    with pytest.warns(ax.AxisCheckWarning, match="psum over 'i' of a value that is already a psum over 'i'"):
        out = ax.vmap(_summed_twice, axis_name="i")(jnp.arange(4.0))
    assert jnp.array_equal(out, jax.vmap(_summed_twice, axis_name="i")(jnp.arange(4.0)))  # JAX's answer, kept
    counted = ax.vmap(lambda x: x * jax.lax.psum(1, "i"), axis_name="i")
    with warnings.catch_warnings():
        warnings.simplefilter("error", ax.AxisCheckWarning)
        counted(jnp.arange(4.0))
        ax.vmap(lambda x: jax.lax.psum(x, "i") + jax.lax.psum(x * 2, "i"), axis_name="i")(jnp.arange(4.0))


def test_a_psum_of_a_psum_is_found_through_jit_in_any_axis_order_and_a_pmean_of_one_is_not() -> None:
    """A pmean of a psum (a psum divided by the size) is the sum itself: meant. A psum
    of a psum inside a jit, over the same axes named in another order, or over more
    axes than the first, multiplies by the size of the axes summed twice."""

    def two_levels(fn: Any) -> Any:
        return ax.vmap(ax.vmap(fn, axis_name="j"), axis_name="i")

    x = jnp.ones((2, 3))
    with warnings.catch_warnings():
        warnings.simplefilter("error", ax.AxisCheckWarning)
        two_levels(lambda x: jax.lax.pmean(jax.lax.psum(x, "i"), "i"))(x)
        two_levels(lambda x: jax.lax.psum(jax.lax.psum(x, "i"), "j"))(x)  # a sum over i, then over j
    twice = {
        "jit": lambda x: jax.jit(lambda s: jax.lax.psum(s, "i"))(jax.lax.psum(x, "i")),
        "order": lambda x: jax.lax.psum(jax.lax.psum(x, ("i", "j")), ("j", "i")),  # axischeck: ignore[AX019]
        "superset": lambda x: jax.lax.psum(jax.lax.psum(x, "i"), ("i", "j")),  # axischeck: ignore[AX019]
    }
    for fn in twice.values():
        with pytest.warns(ax.AxisCheckWarning, match="of a value that is already a psum over"):
            two_levels(fn)(x)


def test_a_psum_of_a_psum_in_a_shard_map_is_warned_of_by_predict() -> None:
    mesh = jax.sharding.Mesh(np.array(jax.devices()[:4]), ("i",))
    f = ax.shard_map(_summed_twice, mesh=mesh, in_specs=P("i"), out_specs=P())
    with pytest.warns(ax.AxisCheckWarning, match="already a psum over 'i'"):
        f.predict(jnp.arange(4.0))


def _forward(w: jax.Array, x: jax.Array) -> jax.Array:
    return jnp.tanh(x @ w)


@pytest.mark.devices(8)
def test_an_output_split_over_an_axis_nothing_is_split_over_warns_of_its_copies() -> None:
    """jax's smap commit: None in in_axes replicates, and a bare None applies to every
    argument, so weights meant replicated take the batch with them: every device computes
    the whole output, and out_axes=0 stacks the 8 copies, (128, 2) for (16, 2), silently.
    The same with shard_map's in_specs P() for both. Said where axischeck traces the call."""
    mesh = jax.make_mesh((8,), ("x",), axis_types=(jax.sharding.AxisType.Auto,))
    w, x = jnp.linspace(-1.0, 1.0, 6).reshape(3, 2), jnp.ones((16, 3))
    copies = (
        "the same on every device along 'x'.*8 identical copies of one \\(16, 2\\) block, stacked into \\(128, 2\\)"
    )
    with jax.set_mesh(mesh), pytest.warns(ax.AxisCheckWarning, match=copies):
        stacked = ax.smap(_forward, in_axes=None, out_axes=0, axis_name="x")  # axischeck: ignore[AX028]
        stacked.predict(w, x)
    with pytest.warns(ax.AxisCheckWarning, match=copies):
        tiled = ax.shard_map(_forward, mesh=mesh, in_specs=(P(), P()), out_specs=P("x"))  # axischeck: ignore[AX028]
        tiled.predict(w, x)


@pytest.mark.devices(8)
def test_outputs_made_per_device_on_purpose_are_not_called_copies() -> None:
    """The batch split (the output varies), a buffer made from no argument (zeros to
    fill per device), a value that reads the device's index, and a pmean'd loss beside
    split data are each what their out_specs say."""
    mesh = jax.make_mesh((8,), ("x",), axis_types=(jax.sharding.AxisType.Auto,))
    w, x = jnp.ones((3, 2)), jnp.ones((16, 3))
    with warnings.catch_warnings():
        warnings.simplefilter("error", ax.AxisCheckWarning)
        ax.shard_map(_forward, mesh=mesh, in_specs=(P(), P("x")), out_specs=P("x")).predict(w, x)
        ax.shard_map(lambda w: jnp.zeros((4,)), mesh=mesh, in_specs=(P(),), out_specs=P("x")).predict(w)
        indexed = ax.shard_map(lambda w: w * jax.lax.axis_index("x"), mesh=mesh, in_specs=(P(),), out_specs=P("x"))
        indexed.predict(w)
        loss = ax.shard_map(
            lambda w, x: jax.lax.pmean(jnp.sum(_forward(w, x)), "x")[None],
            mesh=mesh,
            in_specs=(P(), P("x")),
            out_specs=P("x"),
        )
        loss.predict(w, x)
