"""pytest plugin: run JAX's own test files with its transforms swapped for axischeck's.

Load it with `-p axischeck_jax_swap` (this folder on `PYTHONPATH`); it does nothing unless
`--axischeck-jax-swap` is given or `AXISCHECK_JAX_SWAP=1` is set. When on:

1. `axischeck.patch()` runs in `pytest_configure`, before any test module is imported, so
   `import jax; jax.vmap(...)` and `from jax import vmap, pmap` in the test files bind
   axischeck's transforms.
2. After collection (every test module imported, no test run yet) `axischeck.patch()` runs
   again: it rescans `sys.modules` and swaps names bound some other way, such as
   shard_map_test.py's `from jax._src.shard_map import shard_map`.
3. Test-module globals that are JAX-internal *modules* exporting a transform (api_test.py's
   `from jax._src import api`, used as `api.vmap(...)`) are replaced in that test module only
   by a proxy module whose transform attributes are axischeck's and whose other attributes
   are the real module's (reads, writes and deletes pass through).

JAX's internals (`jax._src.*`) are never modified: they keep JAX's transforms.
"""

from __future__ import annotations

import os
import sys
import types
from typing import Any

import pytest

_ENV = "AXISCHECK_JAX_SWAP"
_NAMES = ("vmap", "pmap", "shard_map", "smap")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--axischeck-jax-swap",
        action="store_true",
        default=False,
        help="swap jax.vmap/pmap/shard_map/smap for axischeck's in the collected test modules",
    )


def _enabled(config: pytest.Config) -> bool:
    return bool(config.getoption("--axischeck-jax-swap")) or os.environ.get(_ENV, "") not in ("", "0")


class _ModuleProxy(types.ModuleType):
    """A stand-in for one JAX module inside one test module: a few attributes overridden."""

    def __init__(self, real: types.ModuleType, overrides: dict[str, Any]) -> None:
        super().__init__(real.__name__, real.__doc__)
        object.__setattr__(self, "_axischeck_real", real)
        object.__setattr__(self, "_axischeck_overrides", overrides)

    def __getattribute__(self, name: str) -> Any:
        if name in ("_axischeck_real", "_axischeck_overrides", "__class__"):
            return object.__getattribute__(self, name)
        overrides = object.__getattribute__(self, "_axischeck_overrides")
        if name in overrides:
            return overrides[name]
        return getattr(object.__getattribute__(self, "_axischeck_real"), name)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(object.__getattribute__(self, "_axischeck_real"), name, value)

    def __delattr__(self, name: str) -> None:
        delattr(object.__getattribute__(self, "_axischeck_real"), name)

    def __repr__(self) -> str:
        return f"<axischeck proxy of {object.__getattribute__(self, '_axischeck_real')!r}>"


def _proxy_module_globals(
    module: types.ModuleType, originals: dict[str, Any], replacements: dict[str, Any]
) -> list[str]:
    """Replace this test module's references to JAX modules that export a transform."""
    swapped = []
    for key, value in list(vars(module).items()):
        if not isinstance(value, types.ModuleType) or isinstance(value, _ModuleProxy):
            continue
        if not value.__name__.startswith("jax."):
            continue
        overrides = {
            attr: replacements[name]
            for name in _NAMES
            if name in replacements
            for attr in dir(value)
            if getattr(value, attr, None) is originals[name]
        }
        # `import jax` is already patched at the top level; only proxy JAX's other modules.
        if overrides and value is not sys.modules.get("jax"):
            setattr(module, key, _ModuleProxy(value, overrides))
            swapped.append(f"{module.__name__}.{key} (proxy of {value.__name__}: {', '.join(sorted(overrides))})")
    return swapped


def pytest_configure(config: pytest.Config) -> None:
    if not _enabled(config):
        return
    import axischeck
    from axischeck import _patch

    _patch.patch()
    config.stash[_STATE] = {"axischeck": axischeck, "patch": _patch}
    # JAX's suite turns warnings into errors; axischeck's own warning (pmap out_axes=None on a
    # mapped output: JAX silently keeps device 0's block) is the one deliberate addition.
    config.addinivalue_line("filterwarnings", "ignore::axischeck.AxisCheckWarning")


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    state = config.stash.get(_STATE, None)
    if state is None:
        return
    _patch = state["patch"]
    _patch.patch()  # already active: rescans sys.modules for names bound since
    originals = _patch.originals()
    replacements = {name: getattr(state["axischeck"], name, None) for name in originals}
    replacements = {k: v for k, v in replacements.items() if v is not None}
    proxied: list[str] = []
    ours = {id(fn) for fn in replacements.values()}
    for module in {id(item.module): item.module for item in items if getattr(item, "module", None)}.values():
        proxied += _proxy_module_globals(module, originals, replacements)
        # names that bound axischeck's transform by themselves, at import (`from jax import vmap`)
        bound = [key for key, value in vars(module).items() if id(value) in ours]
        proxied += [f"{module.__name__}.{key} (bound to axischeck's at import)" for key in bound]
    state["proxied"] = proxied


def pytest_report_header(config: pytest.Config) -> list[str]:
    if not _enabled(config):
        return ["axischeck jax swap: off (baseline)"]
    import jax

    import axischeck

    swapped = [
        name for name in _NAMES if hasattr(axischeck, name) and getattr(jax, name, None) is getattr(axischeck, name)
    ]
    return [f"axischeck jax swap: on: jax.{', jax.'.join(swapped)} are axischeck's"]


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    state = config.stash.get(_STATE, None)
    if state is None:
        return
    lines = [f"  {where}" for where in state["patch"].replacements()] + [f"  {p}" for p in state.get("proxied", [])]
    terminalreporter.write_sep("-", "axischeck jax swap: names replaced")
    terminalreporter.write_line("\n".join(lines) if lines else "  (none)")


def pytest_unconfigure(config: pytest.Config) -> None:
    state = config.stash.get(_STATE, None)
    if state is not None:
        state["patch"].unpatch()


_STATE = pytest.StashKey[dict[str, Any]]()
