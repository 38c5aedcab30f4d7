"""pytest plugin for scripts/lib_suites.sh: `--lib-suites-mapping` keeps only the collected
tests that map, and deselects the others (pytest counts them as deselected).

A test maps when its own code (its body, the functions it defines, its decorators) names
`vmap`, `pmap`, `shard_map`, `filter_vmap` or `filter_pmap`, as an attribute (`jax.vmap`,
`eqx.filter_vmap`) or a bare name (`from jax import vmap`). The source is read through
the test's wrappers (pytest's and absl's parametrized cases alike), so every case of a
test that maps is kept. A test that reaches a map only through a helper defined elsewhere
is deselected; one whose source cannot be read is kept."""

from __future__ import annotations

import ast
import inspect
import textwrap
from typing import Any

import pytest

MAPS = frozenset({"vmap", "pmap", "shard_map", "filter_vmap", "filter_pmap"})
_seen: dict[Any, bool] = {}


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--lib-suites-mapping",
        action="store_true",
        help="run only the tests whose own code calls vmap, pmap, shard_map or filter_vmap",
    )


def _names_a_map(tree: ast.AST) -> bool:
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in MAPS:
            return True
        if isinstance(node, ast.Name) and node.id in MAPS:
            return True
    return False


def maps(item: pytest.Item) -> bool:
    obj = getattr(item, "obj", None)
    function = getattr(obj, "__func__", obj)
    if not callable(function):
        return True
    function = inspect.unwrap(function)
    code = getattr(function, "__code__", None)
    if code is None:
        return True
    if code not in _seen:
        try:
            tree = ast.parse(textwrap.dedent(inspect.getsource(function)))
        except (OSError, TypeError, SyntaxError):
            _seen[code] = True
        else:
            _seen[code] = _names_a_map(tree)
    return _seen[code]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not config.getoption("lib_suites_mapping"):
        return
    kept = [item for item in items if maps(item)]
    dropped = [item for item in items if not maps(item)]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept
