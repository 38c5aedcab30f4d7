"""The code cells of a Jupyter notebook (`.ipynb`), in order, as one module.

A notebook runs its cells top to bottom in one namespace, so lint reads them as one file:
a transform made in one cell and called in another is checked as it would be in a script.
Each module line keeps where it came from (the cell's number among all the notebook's
cells, from 1, and the line in that cell), so findings are reported as a reader of the
notebook counts them.

IPython's own syntax is not Python, and it is blanked (its lines stay, empty, so line
numbers hold): line magics (`%timeit f(x)`), shell escapes (`!pip install jax`), help
(`f?`, `??f`), assignments from either (`files = !ls`, `t = %timeit -o f(x)`) and their
backslash continuations. A cell that starts with a cell magic (`%%bash`, `%%timeit`) is
not Python and is left out whole, as is a cell that still does not parse (half-written
cells are common): the others are checked.
"""

from __future__ import annotations

import ast
import json
import re
import warnings
from dataclasses import dataclass


class NotANotebook(ValueError):
    """The file is not a notebook lint can read (not JSON, or no list of cells)."""


@dataclass(frozen=True, slots=True)
class NotebookCode:
    """The notebook's code as one module, and where each of its lines comes from."""

    source: str
    cells: tuple[tuple[int, int], ...]  # per module line (from 1, at index line - 1): (cell, line in cell)

    def place(self, line: int) -> tuple[int, int]:
        """(cell number, line in the cell) of a module line; (0, line) past the code."""
        if 0 < line <= len(self.cells):
            return self.cells[line - 1]
        return 0, line


# `name = %magic ...`, `name = !command` (IPython's assignment forms), and the bare forms.
_ASSIGNED_MAGIC = re.compile(r"^\s*[\w.,\s\[\]()]+=\s*[%!]")
_HELP = re.compile(r"^\s*(\?{1,2}[\w.]+|[\w.]+\?{1,2})\s*$")


def _ipython_line(line: str) -> bool:
    stripped = line.lstrip()
    if stripped.startswith(("%", "!")):
        return True
    return bool(_ASSIGNED_MAGIC.match(line) or _HELP.match(line))


def code_lines(cell: str) -> list[str] | None:
    """A code cell's lines with IPython's syntax blanked; None for a cell magic's cell."""
    lines = cell.splitlines()
    if lines and lines[0].lstrip().startswith("%%"):
        return None
    out: list[str] = []
    continued = False
    for line in lines:
        blank = continued or _ipython_line(line)
        continued = blank and line.rstrip().endswith("\\")
        out.append("" if blank else line)
    return out


def read_notebook(text: str) -> NotebookCode:
    """The code cells of notebook JSON `text`, joined; cells that do not parse are blanked.

    ```python
    >>> import json
    >>> cells = [{"cell_type": "markdown", "source": "# hi"}]
    >>> cells.append({"cell_type": "code", "source": ["%time f()\\n", "x = 1"]})
    >>> code = read_notebook(json.dumps({"cells": cells}))
    >>> code.source.splitlines(), code.place(2)
    (['', 'x = 1'], (2, 2))
    ```
    """
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as err:
        raise NotANotebook(f"not notebook JSON ({err})") from None
    cells = data.get("cells") if isinstance(data, dict) else None
    if not isinstance(cells, list):
        raise NotANotebook("no list of cells")
    blocks: list[tuple[int, list[str]]] = []
    for number, cell in enumerate(cells, start=1):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        if isinstance(source, list):  # nbformat's lines, each with its newline but the last
            source = "".join(s for s in source if isinstance(s, str))
        if not isinstance(source, str):
            continue
        lines = code_lines(source)
        if lines is not None and _parses("\n".join(lines)):
            blocks.append((number, lines))
    out: list[str] = []
    places: list[tuple[int, int]] = []
    for number, lines in blocks:
        out.extend(lines)
        places.extend((number, k) for k in range(1, len(lines) + 1))
    return NotebookCode("\n".join(out) + ("\n" if out else ""), tuple(places))


def _parses(code: str) -> bool:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escape sequences and the like in linted code
            ast.parse(code)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return False
    return True
