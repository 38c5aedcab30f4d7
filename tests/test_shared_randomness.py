"""The same random draws on every example or device: `ax.SharedRandomnessWarning`.

Differential against real JAX: in every buggy program below the draws really are equal
along the mapped axis (checked on JAX's own output), axischeck warns once with the
sampler, the key and where it comes from, the output and a remedy; the remedy applied,
the draws differ along the axis and nothing is said. Intended sharing (draws that reach
only outputs that do not vary, keys that are split or folded with the axis index) is
never reported, and the function runs as often as JAX runs it.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import Mesh
from jax.sharding import PartitionSpec as P

import axischeck as ax
from axischeck._engine._randomness import MAPPED, shared_draws

KEY = jax.random.key(0)
RAW_KEY = jax.random.PRNGKey(0)


@contextmanager
def caught() -> Iterator[list[ax.SharedRandomnessWarning]]:
    """The SharedRandomnessWarnings issued inside, every one (no registry dedup)."""
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        found: list[ax.SharedRandomnessWarning] = []
        yield found
    found.extend(w.message for w in seen if isinstance(w.message, ax.SharedRandomnessWarning))


def rows_equal(out: jax.Array) -> bool:
    """Whether every row of `out` (one per example or device) is the same."""
    values = np.asarray(out)
    return bool(np.all(values == values[:1]))


def noisy(x: jax.Array, key: jax.Array) -> jax.Array:
    return x + jax.random.normal(key, x.shape)


def test_an_unmapped_key_warns_and_every_example_draws_the_same() -> None:
    x = jnp.zeros((4, 3))
    with caught() as found:
        out = ax.vmap(noisy, in_axes=(0, None))(x, KEY)
    assert rows_equal(out) and rows_equal(jax.vmap(noisy, in_axes=(0, None))(x, KEY))  # JAX's own: the bug
    (warning,) = found
    text = str(warning)
    assert re.search(
        r"vmap\(noisy, in_axes=\(0, None\), out_axes=0\): every example draws the same random numbers", text
    )
    assert re.search(r"jax\.random\.normal at test_shared_randomness\.py:\d+ \(noisy\)", text)
    assert "draws from key (in_axes None)" in text and "reach output, which varies" in text
    assert "Fix: pass jax.random.split(key, 4) for key, one key per example, and map it" in text
    assert (
        warning.fix is not None
        and warning.hint is None
        and warning.unit == "example"
        and warning.key == "key (in_axes None)"
    )
    assert isinstance(warning, ax.AxisCheckWarning) and isinstance(warning, UserWarning)
    with caught() as found:  # the remedy: a key per example, mapped
        fixed = ax.vmap(noisy, in_axes=(0, 0))(x, jax.random.split(KEY, 4))
    assert not found and not rows_equal(fixed)


def test_the_warning_points_at_the_users_line() -> None:
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        ax.vmap(noisy, in_axes=(0, None))(jnp.zeros((2, 3)), KEY)
    (warning,) = [w for w in seen if w.category is ax.SharedRandomnessWarning]
    assert warning.filename == __file__


def test_raw_keys_closures_and_seeds_made_inside() -> None:
    x = jnp.zeros((4, 3))
    with caught() as found:
        out = ax.vmap(noisy, in_axes=(0, None))(x, RAW_KEY)  # a jax.random.PRNGKey: uint32[2]
    assert rows_equal(out) and "draws from key (in_axes None)" in str(found[0])

    def closes(x: jax.Array) -> jax.Array:
        return x + jax.random.uniform(KEY, x.shape)

    with caught() as found:
        out = ax.vmap(closes)(x)
    assert rows_equal(out)
    assert "jax.random.uniform" in str(found[0]) and "draws from KEY (closed over by closes)" in str(found[0])
    assert "pass the key in as an argument, jax.random.split(KEY, 4)" in str(found[0]) and found[0].fix is not None

    def seeded(x: jax.Array) -> jax.Array:
        return x + jax.random.normal(jax.random.key(1), x.shape)

    with caught() as found:
        out = ax.vmap(seeded)(x)
    assert rows_equal(out) and "a key made inside seeded from a constant seed" in str(found[0])
    assert "Hint: " in str(found[0]) and found[0].fix is None


def test_dropout_masks_shared_over_the_batch() -> None:
    def dropout(x: jax.Array, key: jax.Array) -> jax.Array:
        keep = jax.random.bernoulli(key, 0.5, x.shape)
        return jnp.where(keep, x / 0.5, 0.0)

    x = jnp.ones((8, 16))
    with caught() as found:
        out = ax.vmap(dropout, in_axes=(0, None))(x, KEY)
    assert rows_equal(out) and "jax.random.bernoulli" in str(found[0])


@pytest.mark.parametrize(
    "fun, in_axes, args",
    [
        # common random numbers: the draws reach only an output that does not vary
        (lambda x, k: (x * 2, jax.random.normal(k, (3,))), (0, None), (jnp.ones((4, 3)), KEY)),
        # a key per example
        (noisy, (0, 0), (jnp.ones((4, 3)), jax.random.split(KEY, 4))),
        # a key folded with data that is mapped
        (
            lambda x, i, k: x + jax.random.normal(jax.random.fold_in(k, i), x.shape),
            (0, 0, None),
            (jnp.ones((4, 3)), jnp.arange(4), KEY),
        ),
        # no randomness at all
        (lambda x, y: x * y, (0, None), (jnp.ones((4, 3)), jnp.ones(3))),
    ],
)
def test_intended_sharing_and_mapped_keys_are_not_reported(
    fun: Callable[..., Any], in_axes: tuple[int | None, ...], args: tuple[Any, ...]
) -> None:
    with caught() as found:
        ax.vmap(fun, in_axes=in_axes)(*args)
    assert not found


def test_a_key_folded_with_the_axis_index_is_not_reported() -> None:
    def folded(x: jax.Array, key: jax.Array) -> jax.Array:
        return noisy(x, jax.random.fold_in(key, jax.lax.axis_index("batch")))

    x = jnp.zeros((4, 3))
    with caught() as found:
        out = ax.vmap(folded, in_axes=(0, None), axis_name="batch")(x, KEY)
    assert not found and not rows_equal(out)
    with caught() as found:  # without the fold: the remedy offered is the fold
        ax.vmap(noisy, in_axes=(0, None), axis_name="batch")(x, KEY)
    assert "or draw from jax.random.fold_in(key, jax.lax.axis_index('batch')) inside noisy" in str(found[0])


def test_warned_once_per_transform_and_call_and_runs_as_often_as_jax() -> None:
    runs: list[int] = []

    def counted(x: jax.Array, key: jax.Array) -> jax.Array:
        runs.append(1)
        return noisy(x, key)

    x = jnp.zeros((4, 3))
    for _ in range(3):
        jax.vmap(counted, in_axes=(0, None))(x, KEY)
    jax_runs, runs[:] = len(runs), []
    with caught() as found:
        f = ax.vmap(counted, in_axes=(0, None))
        for _ in range(3):
            f(x, KEY)
        ax.vmap(counted, in_axes=(0, None))(x, KEY)  # made again: the same function and options
    assert len(found) == 1
    assert len(runs) == jax_runs + 1


def test_under_jit_once_per_trace() -> None:
    runs: list[int] = []

    def counted(x: jax.Array, key: jax.Array) -> jax.Array:
        runs.append(1)
        return noisy(x, key)

    step = jax.jit(ax.vmap(counted, in_axes=(0, None)))
    with caught() as found:
        out = step(jnp.zeros((4, 3)), KEY)
        step(jnp.zeros((4, 3)), KEY)
    assert len(found) == 1 and rows_equal(out) and len(runs) == 1
    with caught() as found:  # a new shape: JAX traces again, and so is the check made
        step(jnp.zeros((5, 3)), KEY)
    assert len(found) == 1 and len(runs) == 2


def test_loops_and_branches_carry_the_key() -> None:
    def walk(x: jax.Array, key: jax.Array) -> jax.Array:
        def body(carry: tuple[jax.Array, jax.Array], _: None) -> tuple[tuple[jax.Array, jax.Array], None]:
            k, acc = carry
            k, sub = jax.random.split(k)
            return (k, acc + jax.random.normal(sub, acc.shape)), None

        (_, acc), _ = jax.lax.scan(body, (key, x), None, length=3)
        return acc

    x = jnp.zeros((4, 3))
    with caught() as found:
        out = ax.vmap(walk, in_axes=(0, None))(x, KEY)
    assert rows_equal(out) and len(found) == 1
    with caught() as found:
        ax.vmap(walk, in_axes=(0, 0))(x, jax.random.split(KEY, 4))
    assert not found

    def branch(x: jax.Array, key: jax.Array) -> jax.Array:
        return jax.lax.cond(x.sum() > 100, lambda: x, lambda: noisy(x, key))

    with caught() as found:
        out = ax.vmap(branch, in_axes=(0, None))(x, KEY)
    assert rows_equal(out) and len(found) == 1


@pytest.mark.devices(2)
def test_pmap_devices_draw_the_same() -> None:
    n = jax.local_device_count()
    x = jnp.zeros((n, 3))
    with caught() as found:
        out = ax.pmap(noisy, in_axes=(0, None))(x, KEY)
    assert rows_equal(out)
    assert "pmap(noisy, in_axes=(0, None), out_axes=0): every device draws the same" in str(found[0])
    assert f"jax.random.split(key, {n})" in str(found[0])
    with caught() as found:
        fixed = ax.pmap(noisy, in_axes=(0, 0))(x, jax.random.split(KEY, n))
    assert not found and not rows_equal(fixed)

    def folded(x: jax.Array, key: jax.Array) -> jax.Array:
        return noisy(x, jax.random.fold_in(key, jax.lax.axis_index("d")))

    with caught() as found:
        out = ax.pmap(folded, axis_name="d", in_axes=(0, None))(x, KEY)
    assert not found and not rows_equal(out)


@pytest.mark.devices(2)
def test_shard_map_replicated_key() -> None:
    mesh = Mesh(jax.devices(), ("x",))
    n = mesh.shape["x"]
    x = jnp.zeros((n, 3))

    def block(x: jax.Array, key: jax.Array) -> jax.Array:
        return noisy(x, key)

    with caught() as found:
        out = ax.shard_map(block, mesh=mesh, in_specs=(P("x"), P()), out_specs=P("x"))(x, KEY)
    assert rows_equal(out)
    text = str(found[0])
    assert "every device draws the same" in text and "key (in_specs P())" in text and "mesh axis 'x'" in text
    assert "Fix: draw from jax.random.fold_in(key, jax.lax.axis_index('x')) inside block" in text

    def fixed(x: jax.Array, key: jax.Array) -> jax.Array:
        return noisy(x, jax.random.fold_in(key, jax.lax.axis_index("x")))

    with caught() as found:
        out = ax.shard_map(fixed, mesh=mesh, in_specs=(P("x"), P()), out_specs=P("x"))(x, KEY)
    assert not found and not rows_equal(out)


@pytest.mark.devices(2)
@pytest.mark.skipif(not hasattr(jax, "smap"), reason="this JAX has no jax.smap")
def test_smap_unmapped_key() -> None:
    mesh = Mesh(jax.devices(), ("x",))
    x = jnp.zeros((mesh.shape["x"], 3))
    with caught() as found, jax.set_mesh(mesh):
        out = ax.smap(noisy, in_axes=(0, None), out_axes=0, axis_name="x")(x, KEY)
    assert rows_equal(out) and "key (in_axes None)" in str(found[0]) and "axis 'x'" in str(found[0])


def test_filtered_like_any_warning() -> None:
    x = jnp.zeros((4, 3))

    def again(x: jax.Array, key: jax.Array) -> jax.Array:
        return noisy(x, key)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ax.SharedRandomnessWarning)
        ax.vmap(again, in_axes=(0, None))(x, KEY)  # pytest's "error" filter would raise otherwise
    with pytest.raises(ax.SharedRandomnessWarning):  # an error where warnings are errors
        ax.vmap(lambda x, k: noisy(x, k), in_axes=(0, None))(x, KEY)
    with caught() as found, ax.checks_disabled():
        ax.vmap(lambda x, k: noisy(x, k), in_axes=(0, None))(x, KEY)
    assert not found


def test_the_warning_pickles_with_its_facts() -> None:
    import pickle

    with caught() as found:
        ax.vmap(lambda x, key: noisy(x, key), in_axes=(0, None))(jnp.zeros((2, 3)), KEY)
    again = pickle.loads(pickle.dumps(found[0]))
    assert str(again) == str(found[0]) and again.sampler == "jax.random.normal"


def test_the_analysis_reads_while_loops_and_collectives() -> None:
    token = frozenset({MAPPED})
    named = frozenset({"i"})

    def loop(x: jax.Array, key: jax.Array) -> jax.Array:
        def body(c: tuple[int, jax.Array, jax.Array]) -> tuple[int, jax.Array, jax.Array]:
            i, k, acc = c
            k, sub = jax.random.split(k)
            return i + 1, k, acc + jax.random.normal(sub, acc.shape)

        return jax.lax.while_loop(lambda c: c[0] < 3, body, (0, key, x))[2]

    closed = jax.make_jaxpr(loop)(jnp.zeros(3), KEY)
    assert len(shared_draws(closed, [token, frozenset()], token)) == 1
    assert not shared_draws(closed, [token, token], token)

    def summed(x: jax.Array, key: jax.Array) -> tuple[jax.Array, jax.Array]:
        noise = jax.random.normal(key, x.shape)
        return jax.lax.psum(x, "i") + noise, x + jax.lax.pmean(noise, "i")

    closed = jax.make_jaxpr(summed, axis_env=[("i", 4)])(jnp.zeros(3), KEY)
    found = shared_draws(closed, [named, frozenset()], named)
    assert len(found) == 1 and found[0].outputs == (1,)  # the psum'd output does not vary


def test_equinox_filter_vmap_speaks_equinox() -> None:
    pytest.importorskip("equinox")
    import axischeck.eqx as axeqx

    x = jnp.zeros((4, 3))

    def sample(x: jax.Array, key: jax.Array) -> jax.Array:
        return noisy(x, key)

    with caught() as found:
        out = axeqx.filter_vmap(sample, in_axes=(0, None))(x, KEY)
    assert rows_equal(out)
    text = str(found[0])
    assert text.startswith("eqx.filter_vmap(sample, in_axes=(0, None)")
    assert "draws from key (in_axes None)" in text and "reach output, which varies" in text
    assert "Fix: pass jax.random.split(key, 4) for key" in text
    with caught() as found:
        fixed = axeqx.filter_vmap(sample)(x, jax.random.split(KEY, 4))
    assert not found and not rows_equal(fixed)


def test_nnx_dropout_with_broadcast_rng_state() -> None:
    nnx = pytest.importorskip("flax.nnx")
    import axischeck.nnx as axnnx

    class Model(nnx.Module):  # type: ignore[misc,name-defined]
        def __init__(self, rngs: Any) -> None:
            self.linear = nnx.Linear(3, 3, rngs=rngs)
            self.dropout = nnx.Dropout(0.5, rngs=rngs)

        def __call__(self, x: jax.Array) -> jax.Array:
            return self.dropout(self.linear(x))  # type: ignore[no-any-return]

    x = jnp.ones((4, 3))
    apply = axnnx.vmap(lambda m, x: m(x), in_axes=(nnx.StateAxes({...: None}), 0))
    with caught() as found:
        out = apply(Model(nnx.Rngs(params=0, dropout=1)), x)
    assert rows_equal(out)
    text = str(found[0])
    assert text.startswith("nnx.vmap(<lambda>, in_axes=(StateAxes({...: None}), 0)")
    assert "m['dropout']['rngs']['key'] (in_axes entry StateAxes({...: None}), which gives it None)" in text
    assert "@nnx.split_rngs(splits=4)" in text and "nnx.StateAxes({nnx.RngState: 0, ...: None})" in text
    assert "in_axes=" not in text.split("Fix:")[1]  # never None in in_axes for RNG state, nor an option alone

    @nnx.split_rngs(splits=4)  # type: ignore[misc]
    @axnnx.vmap(in_axes=(nnx.StateAxes({nnx.RngState: 0, ...: None}), 0))
    def fixed(m: Any, x: jax.Array) -> jax.Array:
        return m(x)  # type: ignore[no-any-return]

    with caught() as found:
        out = fixed(Model(nnx.Rngs(params=0, dropout=1)), x)
    assert not found and not rows_equal(out)


def _nnx_model() -> Any:
    nnx = pytest.importorskip("flax.nnx")

    class Model(nnx.Module):  # type: ignore[misc,name-defined]
        def __init__(self, rngs: Any) -> None:
            self.linear = nnx.Linear(3, 3, rngs=rngs)
            self.dropout = nnx.Dropout(0.5, rngs=rngs)

        def __call__(self, x: jax.Array) -> jax.Array:
            return self.dropout(self.linear(x))  # type: ignore[no-any-return]

    return Model(nnx.Rngs(params=0, dropout=1))


@pytest.mark.parametrize("split, axis_size", [(None, None), (4, None), (4, 8)])
def test_nnx_rng_state_not_split_to_the_mapped_size(split: int | None, axis_size: int | None) -> None:
    """Flax raises (a rank or size mismatch in JAX's words); axischeck says which RNG stream
    was not split to the mapped size and the nnx.split_rngs that makes the call check,
    never None in in_axes for the RNG state (that would share the draws)."""
    nnx = pytest.importorskip("flax.nnx")
    import axischeck.nnx as axnnx

    axes = nnx.StateAxes({nnx.RngState: 0, ...: None})
    x = jnp.ones((8, 3))

    def call(vmap: Any, model: Any) -> Any:
        if axis_size is None:
            run = vmap(lambda m, x: m(x), in_axes=(axes, 0))
            return run(model, x) if split is None else nnx.split_rngs(splits=split)(run)(model, x)
        run = vmap(lambda m: m(jnp.ones(3)), in_axes=(axes,), axis_size=axis_size)
        return nnx.split_rngs(splits=split)(run)(model)

    with pytest.raises(ValueError, match="rank should be at least 1|inconsistent sizes"):
        call(nnx.vmap, _nnx_model())
    with pytest.raises(ax.AxisCheckError) as info:
        call(axnnx.vmap, _nnx_model())
    text = str(info.value)
    assert "the RNG stream 'dropout' (m['dropout']['rngs']['key'])" in text or axis_size is not None
    assert "mapped size is 8" in text
    assert "has shape (), with no axis 0 to map" in text if split is None else f"was split into {split}" in text
    assert "None" not in text.split("Fix:")[1]
    if split is None:
        assert "Fix: decorate the function with @nnx.split_rngs(splits=8)" in text
    elif axis_size is None:  # a split is there: its number changes
        assert "Fix: split the streams into 8, so that each of the 8 examples has its own key: the" in text
        assert "@nnx.split_rngs that split them into 4 with splits=8" in text
    else:  # axis_size alone says the size, and the streams another: either may be stale
        assert "Fix: axis_size=4, the number every RNG stream was split into. The call fits another reading" in text
        assert "split the streams into 8" in text and "split them into 4 with splits=8" in text
        assert info.value.fix is not None and "check which one you meant" in info.value.fix
        run = nnx.vmap(lambda m: m(jnp.ones(3)), in_axes=(axes,), axis_size=4)
        assert nnx.split_rngs(splits=4)(run)(_nnx_model()).shape[0] == 4  # and runs it with 4

    @nnx.split_rngs(splits=8)  # type: ignore[misc]
    def fixed(m: Any, x: jax.Array) -> jax.Array:
        return axnnx.vmap(lambda m, x: m(x), in_axes=(axes, 0))(m, x)  # type: ignore[no-any-return]

    with caught() as found:
        out = fixed(_nnx_model(), x)
    assert not found and not rows_equal(out)


def test_nnx_rng_state_alone_mapped_names_no_size() -> None:
    """Only the RNG state is mapped: nothing says how many examples there are, so the split
    is the user's to size (no number is guessed, no fix is labelled checked)."""
    nnx = pytest.importorskip("flax.nnx")
    import axischeck.nnx as axnnx

    def make(rngs: Any) -> Any:
        return nnx.Linear(3, 3, rngs=rngs)

    with pytest.raises(ValueError, match="rank should be at least 1"):
        nnx.vmap(make, in_axes=(0,))(nnx.Rngs(0))
    with pytest.raises(ax.AxisCheckError) as info:
        axnnx.vmap(make, in_axes=(0,))(nnx.Rngs(0))
    text = str(info.value)
    assert "nothing else mapped" in text and "@nnx.split_rngs(splits=n)" in text and "Fix:" not in text
    assert "has shape (), with no axis 0 to map" in text
    made = nnx.split_rngs(splits=4)(axnnx.vmap(make, in_axes=(0,)))(nnx.Rngs(0))
    assert made.kernel[...].shape == (4, 3, 3) and not rows_equal(made.kernel[...])


def test_a_map_of_one_shares_nothing() -> None:
    """Along an axis of size 1 there is no other member to share the draws with (NumPyro's
    test_vmap_dist samples a batch of one distribution with a fixed key)."""

    def sample(scale: jax.Array) -> jax.Array:
        return scale * jax.random.exponential(jax.random.key(0), (3,))

    with caught() as found:
        ax.vmap(sample)(jnp.ones((1, 3)))
    assert not found
    with caught() as found:
        ax.vmap(sample)(jnp.ones((2, 3)))
    assert len(found) == 1


@pytest.mark.devices(2)
def test_pmap_runs_as_often_as_jax() -> None:
    """pmap keeps the trace of each key: the calls after the checked one run the transform
    that made it, and the function is traced as often as under `jax.pmap`."""
    n = jax.local_device_count()
    runs: list[int] = []

    def counted(x: jax.Array, key: jax.Array) -> jax.Array:
        runs.append(1)
        return noisy(x, key)

    def calls(pmap: Callable[..., Any]) -> int:
        runs[:] = []
        f = pmap(counted, in_axes=(0, None))
        for shape in ((n, 3), (n, 3), (n, 4), (n, 3), (n, 4)):
            f(jnp.zeros(shape), KEY)
        return len(runs)

    with caught() as found:
        assert calls(ax.pmap) == calls(jax.pmap) == 2
    assert len(found) == 2  # one per shape: each is a trace of its own


def helper_that_draws(x: jax.Array) -> jax.Array:
    return x + jax.random.normal(KEY, x.shape)


class Noise:
    def __call__(self, x: jax.Array) -> jax.Array:
        return helper_that_draws(x)


def test_a_call_that_cannot_draw_is_jaxs_own() -> None:
    """A call with no key among its arguments, whose function reaches neither a key nor a
    sampler, is JAX's own: nothing is recorded. A sampler reached through a helper, a
    callable object, a closure or a `functools.partial` is read as one."""
    import functools

    from axischeck._may_draw import may_draw

    x = jnp.zeros((4, 3))
    plain = ax.vmap(lambda v: jnp.sin(v) * 2)
    plain(x)
    assert "_recording" not in plain.__dict__
    assert not may_draw(lambda v: jnp.sin(v) * 2, (x,), {})
    assert may_draw(lambda v: v, (jax.random.split(RAW_KEY, 4),), {})  # a raw key among the arguments
    for drawing in (
        lambda v: helper_that_draws(v),
        Noise(),
        functools.partial(noisy, key=KEY),
        (lambda k: lambda v: v + k)(RAW_KEY),
    ):
        assert may_draw(drawing, (x,), {})
    with caught() as found:
        out = ax.vmap(lambda v: helper_that_draws(v))(x)
    assert rows_equal(out) and len(found) == 1


def test_draws_returned_as_an_output_declared_the_same_are_shared_on_purpose() -> None:
    # dm-haiku#458's fixed init: one parameter draw for the batch, returned with out_axes
    # None, and used by the mapped output. The sharing is declared: nothing is said.
    def init(x: jax.Array, key: jax.Array) -> tuple[jax.Array, jax.Array]:
        w = jax.random.normal(key, (2,))
        return x * w.sum(), w

    xs = jnp.arange(3.0)
    with caught() as found:
        out = ax.vmap(init, in_axes=(0, None), out_axes=(0, None))(xs, KEY)
    assert not found
    np.testing.assert_array_equal(out[1], jax.vmap(init, in_axes=(0, None), out_axes=(0, None))(xs, KEY)[1])

    # The same draws summed over the named axis into that output are not a parameter:
    # every example's noise is the same, and the sum counts it n times.
    def summed(x: jax.Array, key: jax.Array) -> tuple[jax.Array, jax.Array]:
        noise = jax.random.normal(key, ())
        return x + noise, jax.lax.psum(x * noise, "i")

    with caught() as found:
        ax.vmap(summed, in_axes=(0, None), out_axes=(0, None), axis_name="i")(xs, KEY)
    assert len(found) == 1 and "output[0]" in str(found[0])

    mesh = Mesh(jax.devices(), ("x",))
    x = jnp.zeros((mesh.shape["x"], 3))

    def block(x: jax.Array, key: jax.Array) -> tuple[jax.Array, jax.Array]:
        w = jax.random.normal(key, (1, 3))
        return x + w, w

    with caught() as found:
        ax.shard_map(block, mesh=mesh, in_specs=(P("x"), P()), out_specs=(P("x"), P()))(x, KEY)
    assert not found


def _helper(x: jax.Array) -> jax.Array:
    return x * 2


def _through_helper(x: jax.Array) -> jax.Array:
    return _helper(x)


def test_a_function_that_could_not_draw_is_read_again_when_what_it_reads_changes() -> None:
    """Whether a function may draw is kept per function (a transform made inline asks at
    every call), and stands only while every global and closure value it was read from is
    the same: rebinding a global the function calls to a sampler of a closed-over key is
    seen at the next call."""
    global _helper
    xs = jnp.zeros((4, 3))
    before = _helper
    try:
        with caught() as found:
            ax.vmap(_through_helper)(xs)
            ax.vmap(_through_helper)(xs)
        assert not found
        _helper = lambda x: x + jax.random.normal(KEY, x.shape)  # noqa: E731
        with caught() as found:
            out = ax.vmap(_through_helper)(xs)
        assert rows_equal(out) and len(found) == 1 and "closed over" in str(found[0])
    finally:
        _helper = before


def test_raw_keys_mapped_along_their_words_are_reported() -> None:
    """JEP 9263: `jax.random.split` of a PRNGKey gives raw keys of shape (n, 2); in_axes=1
    maps each key's two words, so every example gets one word of each key (JAX draws from
    it silently). Mapping the keys' axis draws from the keys themselves, and is not said."""

    def noise(key: jax.Array) -> jax.Array:
        return jax.random.uniform(key, (3,))

    keys = jax.random.split(RAW_KEY, 2)  # (2, 2): two keys of two words
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        got = ax.vmap(noise, in_axes=1)(keys)
        ax.vmap(noise, in_axes=0)(keys)
    assert jnp.array_equal(got, jax.vmap(noise, in_axes=1)(keys))
    said = [str(w.message) for w in seen if issubclass(w.category, ax.AxisCheckWarning)]
    assert len(said) == 1, said
    assert "key (uint32, shape (2, 2)) is used as raw PRNG keys" in said[0]
    assert "maps axis 1, the axis of each key's 2 words" in said[0]
    assert "jax.random.key" in said[0]


@pytest.mark.devices(8)
@pytest.mark.parametrize("kind", ["vmap", "pmap"])
@pytest.mark.parametrize("key", [KEY, RAW_KEY], ids=["typed", "raw"])
def test_copies_of_one_key_mapped_draw_the_same_numbers(kind: str, key: jax.Array) -> None:
    """A key copied to every member (`jnp.stack([key] * n)`, a helper that replicates
    every leaf to the devices: scalax#6) and mapped: each member gets the same key. Keys
    split from it draw apart, and get no warning."""
    n = 4 if kind == "vmap" else 8
    transform = getattr(ax, kind)

    def noisy(x: jax.Array, key: jax.Array) -> jax.Array:
        return x + jax.random.normal(key, x.shape)

    x = jnp.zeros((n, 3))
    with caught() as found:
        out = transform(noisy)(x, jnp.stack([key] * n))
    assert rows_equal(out)
    (warning,) = found
    unit = "example" if kind == "vmap" else "device"
    assert f"draws from key (in_axes 0, {n} copies of one key)" in str(warning)
    assert f"Fix: pass jax.random.split(key[0], {n}) for key, one key per {unit}, in place of {n} copies" in str(
        warning
    )
    with caught() as found:
        out = transform(noisy)(x, jax.random.split(key, n))
    assert not found and not rows_equal(out)


@pytest.mark.devices(8)
def test_copies_of_one_key_are_named_as_the_user_passed_them_to_equinox() -> None:
    eqx = pytest.importorskip("equinox")

    def noisy(x: jax.Array, key: jax.Array) -> jax.Array:
        return x + jax.random.normal(key, x.shape)

    with caught() as found, ax.patch():
        eqx.filter_pmap(noisy)(jnp.zeros((8, 3)), jnp.stack([RAW_KEY] * 8))
    (warning,) = found
    assert "draws from key (in_axes 0, 8 copies of one key)" in str(warning)
