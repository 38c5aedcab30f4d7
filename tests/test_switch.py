"""The off switch: `AXISCHECK_DISABLE=1` and `ax.checks_disabled()` make every drop-in
JAX's own transform, with no checks, for runs that want zero cost."""

from __future__ import annotations

import os
import subprocess
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import PartitionSpec as P

import axischeck as ax
from jax_oracle import counting


@pytest.mark.devices(2)
def test_transforms_made_inside_the_block_are_jax_own() -> None:
    mesh = jax.make_mesh((2,), ("x",))
    with ax.checks_disabled():
        made = {
            "vmap": ax.vmap(jnp.sin, in_axes=0, signature="(n)->(n)"),
            "pmap": ax.pmap(jnp.sin, axis_name="i"),
            "shard_map": ax.shard_map(jnp.sin, mesh=mesh, in_specs=P("x"), out_specs=P("x")),
            "smap": ax.smap(jnp.sin, in_axes=0, out_axes=0, axis_name="x"),
            "check": ax.check(jnp.sin, signature="(n)->(n)"),
        }
        decorated = ax.vmap(in_axes=(0, None))(jnp.multiply)
    assert made["check"] is jnp.sin
    for name, f in [*made.items(), ("decorator", decorated)]:
        assert not isinstance(f, (ax.Vmapped, ax.Pmapped, ax.ShardMapped, ax.Smapped, ax.Checked)), name
    np.testing.assert_array_equal(made["vmap"](jnp.ones((2, 3))), jnp.sin(jnp.ones((2, 3))))
    np.testing.assert_array_equal(decorated(jnp.ones((2, 3)), 2.0), jnp.full((2, 3), 2.0))
    assert isinstance(ax.vmap(jnp.sin), ax.Vmapped)  # on again after the block


def test_a_transform_made_before_calls_jax_unchecked_inside_the_block() -> None:
    f, runs = counting(lambda x: x - jax.lax.pmean(x, "i"))
    g = ax.vmap(f, axis_name="i")  # checked outside: the first call traces once more than JAX
    x = jnp.arange(6.0).reshape(2, 3)
    with ax.checks_disabled():
        out = g(x)
    assert runs[0] == 1
    np.testing.assert_array_equal(out, x - x.mean(axis=0, keepdims=True))
    bad = ax.vmap(lambda a, b: a + b, signature="(n),(n)->(n)")
    with ax.checks_disabled(), pytest.raises(TypeError):  # JAX's own error, not axischeck's
        bad(jnp.ones((2, 3)), jnp.ones((2, 4)))
    with pytest.raises(ax.ArgumentError):
        bad(jnp.ones((2, 3)), jnp.ones((2, 4)))


def test_the_environment_switch_makes_every_transform_jax_own() -> None:
    program = (
        "import jax, jax.numpy as jnp, axischeck as ax\n"
        "f = ax.vmap(jnp.sin, signature='(n)->(n)')\n"
        "print(isinstance(f, ax.Vmapped), ax.check(jnp.cos) is jnp.cos, f(jnp.ones((2, 3))).shape)\n"
        "original = jax.vmap\n"
        "with ax.patch():\n"
        "    print(jax.vmap is original)\n"
    )
    env = {**os.environ, "AXISCHECK_DISABLE": "1"}
    out = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "True", "(2,", "3)", "True"]


def test_patch_swaps_nothing_with_the_checks_off() -> None:
    original = jax.vmap
    with ax.checks_disabled(), ax.patch():
        assert jax.vmap is original
    with ax.patch():
        assert jax.vmap is ax.vmap
    assert jax.vmap is original


def test_library_wrappers_made_before_still_predict_inside_the_block() -> None:
    """Equinox's and Flax NNX's wrappers made before the block answer predict and explain
    inside it (the transform that checks for them is axischeck's), and their calls are
    the library's own; a wrapper made inside the block is the library's."""
    eqx = pytest.importorskip("equinox")
    nnx = pytest.importorskip("flax.nnx")
    import axischeck.eqx as axeqx
    import axischeck.nnx as axnnx

    made_before = [axeqx.filter_vmap(lambda x: x * 2), axnnx.vmap(lambda x: x * 2)]
    x, bad = jnp.arange(6.0).reshape(3, 2), (jnp.ones((3, 2)), jnp.ones((4, 2)))
    with ax.checks_disabled():
        for wrapper in made_before:
            assert wrapper.predict(x).shapes == (3, 2)
            assert "(3, 2)" in wrapper.explain(x)
            np.testing.assert_array_equal(wrapper(x), x * 2)
        two = lambda a, b: a + b  # noqa: E731
        with pytest.raises(ValueError) as unchecked:
            axeqx.filter_vmap(two)(*bad)
        assert not isinstance(unchecked.value, ax.AxisCheckError)
        assert not isinstance(axeqx.filter_vmap(two), type(made_before[0]))
        assert not isinstance(axnnx.vmap(two), type(made_before[1]))
    assert eqx is not None and nnx is not None


def test_pytest_axischeck_says_nothing_is_patched_with_the_checks_off(tmp_path: os.PathLike[str]) -> None:
    """With AXISCHECK_DISABLE=1 the session header says the checks are off, not that the
    patch is on (nothing is patched)."""
    test = os.path.join(tmp_path, "test_one.py")
    with open(test, "w") as f:
        f.write("import jax\n\n\ndef test_jax_own():\n    assert not jax.vmap.__module__.startswith('axischeck')\n")
    env = {**os.environ, "AXISCHECK_DISABLE": "1", "JAX_PLATFORMS": "cpu"}
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "--axischeck", "-p", "no:cacheprovider", test],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        cwd=tmp_path,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "patch mode on" not in out.stdout
    assert "axischeck: checks off (AXISCHECK_DISABLE is set)" in out.stdout
