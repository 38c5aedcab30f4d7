"""A finding's fix as a text edit, where lint is sure where the fix goes.

A check writes its fix as the option the user should write (`in_axes=(0, 1)`, `axis_name='i'`,
`write 0 instead of '0'`), only when exactly one change is right. An editor wants more: the
text to replace and with what. This module turns a fix into that edit only where the
finding's node says where it goes without doubt:

- `in_axes=...` / `out_axes=...` reported at the option's own value, written as a keyword:
  the value is replaced;
- `axis_name='i'` reported at a transform call that passes no `axis_name` and no `**kwargs`:
  the keyword is added after the call's last argument;
- `write 0 instead of '0'` (a str or float written for an axis): the one constant in the
  option's value that holds the written value is replaced.

Every edit is applied to the source and the result parsed; an edit whose result does not
parse is not offered. Other fixes (`pass x by position`, a hint) stay text.
"""

from __future__ import annotations

import ast
import re
import warnings
from dataclasses import dataclass

from ._module import ModuleInfo


@dataclass(frozen=True, slots=True)
class Edit:
    """Replace the text from (line, column) to (end_line, end_column) with `text`. Lines count
    from 1, columns are characters from 0 (an empty range inserts)."""

    line: int
    column: int
    end_line: int
    end_column: int
    text: str


_OPTION = re.compile(r"^(in_axes|out_axes)=(.+)$", re.DOTALL)
_AXIS_NAME = re.compile(r"^axis_name=('[^'\\]*'|\"[^\"\\]*\")$")
_WRITE = re.compile(r"^write (-?\d+) instead of (.+)$")


def edit_for(module: ModuleInfo, node: ast.AST, fix: str | None) -> Edit | None:
    """The edit that applies `fix` at `node`, or None where lint cannot be sure of one."""
    if fix is None or module.path.lower().endswith((".md", ".ipynb")):
        return None  # a notebook or Markdown file: its text is not the module lint read
    edit = _edit(module, node, fix)
    if edit is None or not _parses(apply(module.source, edit)):
        return None
    return edit


def _edit(module: ModuleInfo, node: ast.AST, fix: str) -> Edit | None:
    m = _OPTION.match(fix)
    if m is not None:
        parent = module.parents.get(node)
        value = _expression_prefix(m.group(2))
        if value is None or not isinstance(parent, ast.keyword) or parent.arg != m.group(1):
            return None
        return _replace(module, node, value)
    m = _AXIS_NAME.match(fix)
    if m is not None:
        return _add_keyword(module, node, f"axis_name={m.group(1)}")
    m = _WRITE.match(fix)
    if m is not None and isinstance(node, ast.expr):
        try:
            written = ast.literal_eval(m.group(2))
        except (ValueError, SyntaxError):
            return None
        found = [
            c
            for c in ast.walk(node)
            if isinstance(c, ast.Constant) and type(c.value) is type(written) and c.value == written
        ]
        return _replace(module, found[0], m.group(1)) if len(found) == 1 else None
    return None


def _expression_prefix(text: str) -> str | None:
    """The expression a fix starts with: `(0, 1)` of `(0, 1) (self is already bound)`."""
    cuts = [i for i in range(len(text)) if text.startswith(" (", i)] + [len(text)]
    for cut in cuts:
        head = text[:cut]
        try:
            ast.parse(head, mode="eval")
        except SyntaxError:
            continue
        return head
    return None


def _position(module: ModuleInfo, line: int, byte_offset: int) -> int:
    """A character column from `ast`'s UTF-8 byte offset."""
    text = module.line(line)
    return byte_offset if text.isascii() else len(text.encode()[:byte_offset].decode(errors="ignore"))


def _replace(module: ModuleInfo, node: ast.AST, text: str) -> Edit | None:
    end_line, end_col = getattr(node, "end_lineno", None), getattr(node, "end_col_offset", None)
    if end_line is None or end_col is None:
        return None
    line, col = getattr(node, "lineno", 1), getattr(node, "col_offset", 0)
    return Edit(line, _position(module, line, col), end_line, _position(module, end_line, end_col), text)


def _add_keyword(module: ModuleInfo, node: ast.AST, keyword: str) -> Edit | None:
    """`keyword` added after the last argument of the call `node` (which passes no `**` and
    not that keyword): `jax.vmap(f)` becomes `jax.vmap(f, axis_name='i')`, and a call
    written over several lines keeps its layout."""
    if not isinstance(node, ast.Call) or any(k.arg is None or k.arg == "axis_name" for k in node.keywords):
        return None
    arguments: list[ast.expr | ast.keyword] = [*node.args, *node.keywords]
    last = max(arguments, key=lambda n: (n.end_lineno or 0, n.end_col_offset or 0), default=None)
    if last is None or last.end_lineno is None or last.end_col_offset is None:
        return None
    column = _position(module, last.end_lineno, last.end_col_offset)
    return Edit(last.end_lineno, column, last.end_lineno, column, f", {keyword}")


def apply(source: str, edit: Edit) -> str:
    """`source` with `edit` applied."""
    lines = source.splitlines(keepends=True)
    start = sum(len(x) for x in lines[: edit.line - 1]) + edit.column
    end = sum(len(x) for x in lines[: edit.end_line - 1]) + edit.end_column
    return source[:start] + edit.text + source[end:]


def _parses(source: str) -> bool:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True
