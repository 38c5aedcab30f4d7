"""`axischeck lint` on Jupyter notebooks: code cells in order, findings at cell and line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from axischeck._cli import main
from axischeck._lint import lint
from axischeck._lint._notebook import NotANotebook, code_lines, read_notebook


def _cell(kind: str, source: str | list[str]) -> dict[str, Any]:
    cell: dict[str, Any] = {"cell_type": kind, "metadata": {}, "source": source}
    if kind == "code":
        cell.update(execution_count=None, outputs=[])
    return cell


def _notebook(path: Path, cells: list[dict[str, Any]]) -> Path:
    path.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    return path


CELLS = [
    _cell("markdown", "# Batching\nSome prose with jax.vmap(f) in it.\n"),
    _cell("code", ["%matplotlib inline\n", "import jax\n", "import jax.numpy as jnp\n", "!pip install einops\n"]),
    _cell("code", "%%bash\necho jax.vmap\n"),
    _cell("code", ["def f(x, y):\n", "    return x + y\n", "\n", "g = jax.vmap(f, in_axes=(0, 0))\n"]),
    _cell("code", ["files = !ls\n", "jnp.ones?\n", "g(jnp.ones((3, 4)), jnp.ones((5, 4)))\n"]),
    _cell("code", "def half_typed(\n"),  # does not parse: left out, the others are checked
    _cell("code", "h = jax.vmap(f, in_axes=(0, None, 1))\n"),
]


def test_a_named_notebook_is_linted_cell_by_cell(tmp_path: Path) -> None:
    nb = _notebook(tmp_path / "demo.ipynb", CELLS)
    findings, stats = lint([str(nb)], use_config=False)
    assert [(f.cell, f.line, f.column, f.code) for f in findings] == [(5, 3, 1, "AX013"), (7, 1, 25, "AX001")]
    assert stats.files == 1 and stats.lines > 0 and stats.unparsable == []
    assert "axis 0 of y (shape (5, 4)) has size 5" in findings[0].message


def test_a_folders_notebooks_are_linted(tmp_path: Path) -> None:
    _notebook(tmp_path / "demo.ipynb", CELLS)
    (tmp_path / ".ipynb_checkpoints").mkdir()
    _notebook(tmp_path / ".ipynb_checkpoints" / "demo-checkpoint.ipynb", CELLS)
    findings, stats = lint([str(tmp_path)], use_config=False)
    assert stats.files == 1 and [f.code for f in findings] == ["AX013", "AX001"]


def test_the_cell_is_in_every_format(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    nb = _notebook(tmp_path / "demo.ipynb", CELLS[:5])
    assert main(["lint", "--no-config", str(nb)]) == 1
    assert capsys.readouterr().out.startswith(f"{nb}:cell 5:3:1: AX013 vmap(f, in_axes=(0, 0)): ")
    assert main(["lint", "--no-config", "--format", "json", str(nb)]) == 1
    (item,) = json.loads(capsys.readouterr().out)
    assert (item["cell"], item["line"], item["column"], item["code"]) == (5, 3, 1, "AX013")
    assert main(["lint", "--no-config", "--format", "sarif", str(nb)]) == 1
    (result,) = json.loads(capsys.readouterr().out)["runs"][0]["results"]
    (location,) = result["locations"]
    assert result["properties"]["cell"] == 5
    assert location["logicalLocations"] == [{"name": "cell 5", "kind": "notebookCell"}]
    assert location["properties"] == {"cell": 5, "line": 3, "column": 1}
    assert main(["lint", "--no-config", "--format", "github", str(nb)]) == 1
    out = capsys.readouterr().out
    assert out.startswith(f"::error file={nb},title=AX013::cell 5, line 3, column 1: vmap(f, ")


def test_a_suppression_comment_works_in_a_cell(tmp_path: Path) -> None:
    cells = [*CELLS[:4], _cell("code", "g(jnp.ones((3, 4)), jnp.ones((5, 4)))  # axischeck: ignore[AX013]\n")]
    assert lint([str(_notebook(tmp_path / "quiet.ipynb", cells))], use_config=False)[0] == []


def test_a_file_that_is_not_a_notebook_is_reported_not_passed(tmp_path: Path) -> None:
    bad = tmp_path / "broken.ipynb"
    bad.write_text('{"cells": [')
    findings, stats = lint([str(bad)], use_config=False)
    assert findings == [] and stats.files == 0
    assert len(stats.unparsable) == 1 and "not notebook JSON" in stats.unparsable[0]
    with pytest.raises(NotANotebook, match="no list of cells"):
        read_notebook('{"cells": 3}')
    with pytest.raises(NotANotebook, match="no list of cells"):
        read_notebook("[1, 2]")


@pytest.mark.parametrize(
    ("line", "blank"),
    [
        ("%timeit f(x)", True),
        ("  !ls -la", True),
        ("out = !ls", True),
        ("t = %timeit -o f(x)", True),
        ("a, b = %who_ls", True),
        ("jnp.ones?", True),
        ("??jax.vmap", True),
        ("x = 10 % 3", False),
        ("print('!')", False),
        ("y = x if x else z", False),
        ("d = {'a': 1}", False),
    ],
)
def test_ipython_syntax_is_blanked_and_python_is_kept(line: str, blank: bool) -> None:
    assert code_lines(line) == ([""] if blank else [line])


def test_a_magics_continuation_lines_are_blanked_and_cell_magics_drop_the_cell() -> None:
    assert code_lines("!pip install \\\n    jax\nx = 1") == ["", "", "x = 1"]
    assert code_lines("%%timeit\nf(x)") is None
    code = read_notebook(
        json.dumps({"cells": [_cell("code", "%%writefile a.py\nimport os\n"), _cell("code", "y = 2")]})
    )
    assert code.source == "y = 2\n" and code.place(1) == (2, 1)
