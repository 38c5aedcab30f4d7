"""Every public name documents itself with a runnable example.

For each name in `axischeck.__all__`, `axischeck.strategies.__all__` and
`axischeck.testing.__all__`, the docstring must hold at least one `>>>` example, and
every example in it (and in its class's own public methods) must pass under doctest.
Examples run as if the user had typed `import jax, jax.numpy as jnp, axischeck as ax`;
Markdown code fences around them are read as blank lines, so ```python blocks render
as code and still end an example's expected output.
"""

from __future__ import annotations

import doctest
import inspect
import io
import re
from typing import Any

import jax
import jax.numpy as jnp
import pytest

import axischeck
import axischeck.strategies
import axischeck.testing

MODULES = (axischeck, axischeck.strategies, axischeck.testing)
PUBLIC: dict[str, Any] = {f"{m.__name__}.{name}": getattr(m, name) for m in MODULES for name in m.__all__}
_FENCE = re.compile(r"^[ \t]*```.*$", re.MULTILINE)
_FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def _own_docstrings(name: str, obj: Any) -> list[tuple[str, str]]:
    """`obj`'s docstring, then those of a class's own public methods and properties."""
    docs = [(name, obj.__doc__ or "")]
    if inspect.isclass(obj):
        for attr, member in vars(obj).items():
            if attr.startswith("_"):
                continue
            if isinstance(member, (classmethod, staticmethod)):
                member = member.__func__
            elif isinstance(member, property):
                member = member.fget
            if inspect.isfunction(member) and member.__doc__:
                docs.append((f"{name}.{attr}", member.__doc__))
    return docs


def _doctest(name: str, doc: str) -> doctest.DocTest:
    globs = {"ax": axischeck, "jax": jax, "jnp": jnp}
    return doctest.DocTestParser().get_doctest(_FENCE.sub("", doc), globs, name, None, 0)


def _has_example(obj: Any) -> bool:
    return bool(_doctest("", obj.__doc__ or "").examples)


def test_every_public_name_has_an_example() -> None:
    missing = sorted(name for name, obj in PUBLIC.items() if not _has_example(obj))
    assert not missing, f"{len(missing)} public name(s) have no '>>>' example in their docstring:\n  " + "\n  ".join(
        missing
    )


def test_the_public_lists_are_what_this_test_covers() -> None:
    assert "axischeck.vmap" in PUBLIC and "axischeck.testing.check_against_jax" in PUBLIC
    assert all(obj is not None for obj in PUBLIC.values())


@pytest.mark.parametrize("name", sorted(n for n, obj in PUBLIC.items() if _has_example(obj)))
def test_examples_run(name: str) -> None:
    report = io.StringIO()
    failed = 0
    for doc_name, doc in _own_docstrings(name, PUBLIC[name]):
        runner = doctest.DocTestRunner(optionflags=_FLAGS)
        runner.run(_doctest(doc_name, doc), out=report.write)
        failed += runner.failures
    assert failed == 0, report.getvalue()


def test_fences_end_an_expected_output() -> None:
    doc = """
    ```python
    >>> 1 + 1
    2
    ```
    Prose right after the fence.
    """
    runner = doctest.DocTestRunner(optionflags=_FLAGS)
    result = runner.run(_doctest("fenced", doc), out=lambda _: None)
    assert (result.failed, result.attempted) == (0, 1)
