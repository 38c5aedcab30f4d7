"""`patch()` / `unpatch()`: jax.vmap & co. routed through axischeck, and put back exactly."""

from __future__ import annotations

import subprocess
import sys
import threading
import types
from collections.abc import Iterator
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import axischeck
from axischeck import _patch
from axischeck._patch import patch, unpatch

# JAX's own transforms, read through `_patch` (a module global bound to `jax.vmap` here would
# itself be swapped by the patch, as any user module's is).
JAX = _patch.originals()
ROUTED = [name for name in _patch.TRANSFORMS if JAX[name] is not None and hasattr(axischeck, name)]


@pytest.fixture(autouse=True)
def _always_unpatched() -> Iterator[None]:
    unpatch()
    yield
    unpatch()


@pytest.fixture
def user_module() -> Iterator[types.ModuleType]:
    """A throwaway user module that did `from jax import vmap, pmap, shard_map` (and smap)."""
    module = types.ModuleType("axischeck_test_user_module")
    source = "from jax import vmap, pmap, shard_map\nimport jax\nsmap = getattr(jax, 'smap', None)\nmy_vmap = vmap\n"
    exec(source, vars(module))
    sys.modules[module.__name__] = module
    yield module
    del sys.modules[module.__name__]


def test_routes_the_public_names_while_patched() -> None:
    assert ROUTED[:3] == ["vmap", "pmap", "shard_map"]
    assert ("smap" in ROUTED) == (JAX["smap"] is not None)  # axischeck has smap wherever JAX does
    patch()
    for name in ROUTED:
        assert getattr(jax, name) is getattr(axischeck, name), name
    unpatch()
    for name in ROUTED:
        assert getattr(jax, name) is JAX[name], name


def test_a_name_axischeck_lacks_is_left_to_jax(monkeypatch: pytest.MonkeyPatch) -> None:
    if JAX["smap"] is None:
        pytest.skip("this JAX has no jax.smap")
    monkeypatch.delattr(axischeck, "smap", raising=False)
    monkeypatch.setattr(axischeck, "_WHERE", {k: v for k, v in axischeck._WHERE.items() if k != "smap"})
    with patch():
        assert jax.vmap is axischeck.vmap
        assert jax.smap is JAX["smap"]


def test_names_imported_from_jax_are_swapped_and_restored(user_module: types.ModuleType) -> None:
    before = dict(vars(user_module))
    with patch():
        assert user_module.vmap is axischeck.vmap
        assert user_module.my_vmap is axischeck.vmap  # any global bound to JAX's function
        assert user_module.pmap is axischeck.pmap
        assert user_module.shard_map is axischeck.shard_map
        if JAX["smap"] is not None:
            assert user_module.smap is axischeck.smap
        assert f"{user_module.__name__}.vmap" in _patch.replacements()
    assert vars(user_module) == before
    assert user_module.vmap is JAX["vmap"]


def test_a_module_imported_while_patched_binds_axischecks() -> None:
    with patch():
        namespace: dict[str, Any] = {}
        exec("from jax import vmap", namespace)
        assert namespace["vmap"] is axischeck.vmap


def test_context_manager_restores_on_exception(user_module: types.ModuleType) -> None:
    with pytest.raises(RuntimeError, match="boom"):
        with patch():
            assert jax.vmap is axischeck.vmap
            raise RuntimeError("boom")
    assert jax.vmap is JAX["vmap"]
    assert user_module.vmap is JAX["vmap"]
    assert not _patch.is_patched()


def test_patching_twice_is_harmless_and_one_unpatch_restores(user_module: types.ModuleType) -> None:
    patch()
    first = _patch.replacements()
    patch()
    assert _patch.replacements() == first  # nothing replaced twice
    assert jax.vmap is axischeck.vmap
    unpatch()
    assert jax.vmap is JAX["vmap"] and user_module.vmap is JAX["vmap"]
    unpatch()  # a no-op when not patched
    assert jax.vmap is JAX["vmap"]


def test_repatching_picks_up_names_bound_since() -> None:
    patch()
    late = types.ModuleType("axischeck_test_late_module")
    late.vmap = JAX["vmap"]  # e.g. `from jax._src.api import vmap` after the first patch
    sys.modules[late.__name__] = late
    try:
        patch()
        assert late.vmap is axischeck.vmap
        unpatch()
        assert late.vmap is JAX["vmap"]
    finally:
        del sys.modules[late.__name__]


def test_nested_context_managers_keep_the_outer_patch() -> None:
    with patch():
        with patch():
            assert jax.vmap is axischeck.vmap
        assert jax.vmap is axischeck.vmap  # the inner `with` did not turn the patch on
    assert jax.vmap is JAX["vmap"]


def test_a_call_patch_survives_a_nested_context_manager() -> None:
    patch()
    with patch():
        pass
    assert jax.vmap is axischeck.vmap


def test_a_name_rebound_while_patched_is_left_alone(user_module: types.ModuleType) -> None:
    def mine(*args: Any, **kwargs: Any) -> None: ...

    with patch():
        user_module.vmap = mine
    assert user_module.vmap is mine
    assert user_module.pmap is JAX["pmap"]


def test_jax_internals_keep_jax_transforms() -> None:
    import jax._src.api
    import jax._src.shard_map

    with patch():
        assert jax._src.api.vmap is JAX["vmap"]
        assert jax._src.shard_map.shard_map is JAX["shard_map"]
        touched = [where for where in _patch.replacements() if where.startswith(("jax._src", "jaxlib"))]
        assert touched == []
        # jnp.vectorize is built on JAX's vmap and keeps working unchanged
        out = jnp.vectorize(jnp.dot, signature="(n),(n)->()")(jnp.ones((4, 3)), jnp.ones((4, 3)))
        assert out.shape == (4,)


def _program(x: jax.Array, y: jax.Array) -> tuple[jax.Array, jax.Array, jax.Array]:
    """User code that calls the transforms through `jax.`; checked patched and unpatched."""
    inner = jax.vmap(lambda a, b: jnp.dot(a, b), in_axes=(0, None))
    nested = jax.vmap(jax.vmap(lambda a: a * 2.0 + 1.0))(x)
    jitted = jax.jit(jax.vmap(lambda a: jnp.sin(a).sum(), in_axes=1))(x)
    return inner(x, y), nested, jitted


def _pmapped(x: jax.Array) -> jax.Array:
    return jax.pmap(lambda a: jax.lax.psum(a, "i"), axis_name="i")(x)


def test_patched_program_gives_the_same_values() -> None:
    x = jnp.arange(12.0).reshape(3, 4)
    y = jnp.arange(4.0)
    expected = _program(x, y)
    with patch():
        got = _program(x, y)
    for e, g in zip(expected, got, strict=True):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(e))


def test_patched_pmap_gives_the_same_values() -> None:
    n = jax.local_device_count()
    x = jnp.arange(n * 3.0).reshape(n, 3)
    expected = _pmapped(x)
    with patch():
        got = _pmapped(x)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(expected))


def _smapped(x: jax.Array) -> Any:
    """User code that calls `jax.smap` (over the context mesh)."""
    mesh = jax.make_mesh((8,), ("x",), axis_types=(jax.sharding.AxisType.Auto,))
    with jax.set_mesh(mesh):
        total = jax.smap(lambda a: jax.lax.psum(a.sum(0), "x"), in_axes=0, out_axes=None, axis_name="x")(x)
        return total, jax.smap(lambda a: a * 2.0, in_axes=1, out_axes=1, axis_name="x")(x.T)


@pytest.mark.devices(8)
def test_patched_smap_gives_the_same_values() -> None:
    if JAX["smap"] is None:
        pytest.skip("this JAX has no jax.smap")
    x = jnp.arange(16 * 3.0).reshape(16, 3)
    expected = _smapped(x)
    with patch():
        assert jax.smap is axischeck.smap
        got = _smapped(x)
        with pytest.raises(axischeck.ArgumentError, match="8 does not divide 12"):
            _smapped(jnp.ones((12, 3)))  # an axis mistake, explained before JAX runs
    for e, g in zip(expected, got, strict=True):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(e))
    assert jax.smap is JAX["smap"]


def test_axis_mistakes_are_axischecks_while_patched() -> None:
    def bad() -> Any:
        return jax.vmap(jnp.add)(jnp.ones(3), jnp.ones(4))

    with pytest.raises(ValueError) as unpatched:
        bad()
    assert not isinstance(unpatched.value, axischeck.AxisCheckError)
    with patch(), pytest.raises(axischeck.AxisCheckError):
        bad()


def test_patch_from_several_threads() -> None:
    errors: list[BaseException] = []

    def worker() -> None:
        try:
            for _ in range(20):
                with patch():
                    pass
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    unpatch()
    assert jax.vmap is JAX["vmap"] and _patch.replacements() == []


def test_patch_at_jax_import_patches_at_once_when_jax_is_imported() -> None:
    with _patch.patch_at_jax_import():
        assert jax.vmap is axischeck.vmap
    assert jax.vmap is JAX["vmap"]


@pytest.mark.slow
def test_patch_at_jax_import_waits_for_jax_and_unpatch_cancels_it() -> None:
    """Before jax is imported: nothing imports it; the first `import jax` comes back patched,
    unless `unpatch()` ran first."""
    code = (
        "import sys\n"
        "from axischeck import _patch\n"
        "_patch.patch_at_jax_import()\n"
        "assert 'jax' not in sys.modules\n"
        "{body}\n"
    )
    patched = (
        "import jax, axischeck\n"
        "assert jax.vmap is axischeck.vmap, jax.vmap\n"
        "assert 'exec_module' not in vars(jax.__loader__)"  # the loader left as found
    )
    cancelled = "_patch.unpatch()\nimport jax\nassert not jax.vmap.__module__.startswith('axischeck')"
    for body in (patched, cancelled):
        r = subprocess.run([sys.executable, "-c", code.format(body=body)], capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr


def test_unpatch_restores_what_patch_replaced_and_not_what_code_bound_while_patched() -> None:
    """As docs/patch-mode.md says: module globals bound before the patch are swapped and put
    back; a default argument made before the patch keeps JAX's while patched; names and
    defaults bound while patched keep axischeck's after `unpatch()`."""
    source = "import jax\nfrom jax import vmap\ndef step(f, vmap_fn=jax.vmap):\n    return vmap_fn(f)\n"
    before = types.ModuleType("axischeck_test_before_patch")
    exec(source, vars(before))
    sys.modules[before.__name__] = before
    try:
        with patch():
            assert before.vmap is axischeck.vmap  # a module global: swapped
            assert before.step.__defaults__ == (JAX["vmap"],)  # a default argument: not reached
            during = types.ModuleType("axischeck_test_during_patch")
            exec(source, vars(during))
            sys.modules[during.__name__] = during
        assert jax.vmap is JAX["vmap"] and before.vmap is JAX["vmap"]  # put back
        assert during.vmap is axischeck.vmap  # bound while patched: kept
        assert during.step.__defaults__ == (axischeck.vmap,)
        assert isinstance(during.step(jnp.sum), axischeck.Vmapped)
    finally:
        sys.modules.pop(before.__name__, None)
        sys.modules.pop("axischeck_test_during_patch", None)
