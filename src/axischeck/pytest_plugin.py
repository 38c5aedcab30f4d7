"""pytest plugin: `pytest --axischeck` runs the test session with `axischeck.patch()` on.

Installed with axischeck (the `pytest11` entry point `axischeck`) and off unless asked for:
without `--axischeck` it adds the option and nothing else. pytest loads every installed
plugin in every project, so this module imports nothing but pytest; axischeck's transforms
and jax are imported only when the option is given. (`pytest -p no:axischeck` leaves it out.)

With `--axischeck`, `jax.vmap`, `jax.pmap`, `jax.shard_map` and `jax.smap` are axischeck's
from jax's first import on (from `pytest_configure` when a conftest already imported it),
before any test module binds them, so `from jax import vmap` in a test module binds
axischeck's. jax is not imported earlier than the tests import it: JAX reads settings such
as `JAX_ENABLE_X64` from the environment at import, and a conftest or test module may set
them first. After collection the patch runs again, to swap names
bound to JAX's transforms some other way (conftest files loaded before the patch, modules
that imported JAX's function from elsewhere). `pytest_unconfigure` puts everything back.
"""

from __future__ import annotations

import sys

import pytest

_OPTION = "--axischeck"
_PATCHED = pytest.StashKey[bool]()


def pytest_addoption(parser: pytest.Parser) -> None:
    """Register `--axischeck` (off by default)."""
    parser.getgroup("axischeck").addoption(
        _OPTION,
        action="store_true",
        default=False,
        help="run the session with jax.vmap, jax.pmap, jax.shard_map and jax.smap routed through axischeck",
    )


def _enabled(config: pytest.Config) -> bool:
    return bool(config.getoption(_OPTION, default=False))


def pytest_configure(config: pytest.Config) -> None:
    """Patch before collection imports the test modules (at jax's first import)."""
    if not _enabled(config):
        return
    from ._patch import patch_at_jax_import

    patch_at_jax_import()
    config.stash[_PATCHED] = True


def pytest_collection_finish(session: pytest.Session) -> None:
    """Patch again once every test module is imported: `patch()` rescans `sys.modules` for
    names bound to JAX's transforms since (a no-op for those already swapped)."""
    if session.config.stash.get(_PATCHED, False):
        from ._patch import patch

        if "jax" in sys.modules:  # otherwise the patch waits for jax's first import
            patch()


def pytest_report_header(config: pytest.Config) -> list[str]:
    """Say so in the session header when the patch is on (nothing when it is off).

    Written without importing jax (the header comes before the test modules): when jax is
    not imported yet, it names every transform axischeck routes, where JAX has it.
    """
    if not config.stash.get(_PATCHED, False):
        return []
    from ._switch import DISABLED_BY_ENVIRONMENT

    if DISABLED_BY_ENVIRONMENT:
        return ["axischeck: checks off (AXISCHECK_DISABLE is set): --axischeck patches nothing"]
    from ._patch import TRANSFORMS, originals

    if sys.modules.get("jax") is None:
        return [f"axischeck: patch mode on: jax.{', jax.'.join(TRANSFORMS)} (where JAX has it) run through axischeck"]
    import axischeck

    routed = [name for name, jax_fn in originals().items() if jax_fn is not None and hasattr(axischeck, name)]
    return [f"axischeck: patch mode on: jax.{', jax.'.join(routed)} run through axischeck"]


def pytest_unconfigure(config: pytest.Config) -> None:
    """Put back everything the patch replaced."""
    if config.stash.get(_PATCHED, False):
        from ._patch import unpatch

        unpatch()
        config.stash[_PATCHED] = False
