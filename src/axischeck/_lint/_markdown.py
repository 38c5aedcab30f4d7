"""Python code cells of a Markdown file (MyST notebooks, docs), as one module with the
file's own line numbers: every line outside a code cell becomes an empty line.

Cells are fenced blocks tagged `python`, `py`, `ipython3`, `{code-cell}`, `{code-block}
python` or `{jupyter-execute}`. Doctest blocks keep their `>>>` / `...` lines only, and
drop an example whose expected output is a traceback.
IPython magics and shell escapes (`%timeit`, `!pip`) are blanked; cells tagged
`raises-exception` are skipped (they are written to fail); a cell that does not parse
is left out, so the others are still checked.
"""

from __future__ import annotations

import ast
import re
import warnings

_FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})\s*(.*)$")
_PYTHON_INFO = re.compile(
    r"^(\{code-cell\}(\s+(ipython3?|python3?))?|\{code-block\}\s+(python|py|ipython3?)|\{jupyter-execute\}"
    r"|python3?|py|ipython3?|pycon)\s*$",
    re.IGNORECASE,
)


def cells(text: str) -> list[tuple[int, list[str]]]:
    """(first line index, code lines) for every Python cell."""
    lines = text.splitlines()
    found: list[tuple[int, list[str]]] = []
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if m is None:
            i += 1
            continue
        indent, fence, info = m.group(1), m.group(2), m.group(3).strip()
        end = _closing(lines, i + 1, fence)
        if not _PYTHON_INFO.match(info):
            i += 1  # a directive fence ({note}) may hold code fences: look inside it
            continue
        body = [line[len(indent) :] if line.startswith(indent) else line.lstrip() for line in lines[i + 1 : end]]
        start = i + 1
        skip = False
        # MyST cell options: `:tags: [...]` lines, or a `---` YAML block, before the code.
        if body and body[0].strip() == "---":
            close = next((k for k in range(1, len(body)) if body[k].strip() == "---"), None)
            if close is not None:
                skip = "raises-exception" in " ".join(body[1:close])
                body, start = body[close + 1 :], start + close + 1
        while body and body[0].startswith(":") and ":" in body[0][1:]:
            skip = skip or "raises-exception" in body[0]
            body, start = body[1:], start + 1
        if not skip:
            found.append((start, _code_lines(body)))
        i = end + 1
    return found


def _closing(lines: list[str], start: int, fence: str) -> int:
    for j in range(start, len(lines)):
        stripped = lines[j].strip()
        if stripped.startswith(fence[0] * len(fence)) and not stripped.strip(fence[0]):
            return j
    return len(lines)


def _code_lines(body: list[str]) -> list[str]:
    if any(line.lstrip().startswith(">>>") for line in body):
        return _doctest_code(body)
    return ["" if line.lstrip().startswith(("%", "!")) else line for line in body]


def _doctest_code(body: list[str]) -> list[str]:
    """A doctest's code: each example's `>>>` and `...` lines, except an example whose
    expected output is a traceback (it is written to fail, as a `raises-exception` cell)."""
    out = [""] * len(body)
    example: list[int] = []  # the lines of the example being read
    for k, line in enumerate(body):
        s = line.lstrip()
        if s.startswith(">>>") or (example and s.startswith("...")):
            example = [k] if s.startswith(">>>") else [*example, k]
            out[k] = s[4:]
            continue
        if example and s.startswith("Traceback ("):
            for j in example:
                out[j] = ""
        example = []  # its expected output (or a blank line) ends an example
    return out


def python_of_markdown(text: str) -> tuple[str, ast.Module, dict[int, int]]:
    """The cells as one module (line numbers kept), its tree, and for each line (from 1) the
    number of characters cut from its start (indentation, `>>> `), to report file columns.
    Cells that do not parse are blanked out one by one until the rest does."""
    original = text.splitlines()
    n_lines = len(original)
    parts = cells(text)
    keep = [True] * len(parts)
    while True:
        out = [""] * n_lines
        for (start, code), kept in zip(parts, keep, strict=True):
            if kept:
                out[start : start + len(code)] = code
        source = "\n".join(out) + "\n"
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                tree = ast.parse(source)
            shift = {k + 1: original[k].find(code) for k, code in enumerate(out) if code and original[k].find(code) > 0}
            return source, tree, shift
        except SyntaxError as err:
            line = (err.lineno or 1) - 1
            bad = next(
                (k for k, (start, code) in enumerate(parts) if keep[k] and start <= line < start + len(code)), None
            )
            if bad is None:
                bad = next((k for k in range(len(parts)) if keep[k]), None)
            if bad is None:
                raise
            keep[bad] = False
