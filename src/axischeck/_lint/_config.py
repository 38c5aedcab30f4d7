"""Settings: `[tool.axischeck.lint]` in the nearest pyproject.toml, files to lint, ignore comments.

```toml
[tool.axischeck.lint]
paths = ["src", "tests"]          # linted when `axischeck lint` is given no PATH
exclude = ["tests/lint_cases"]    # files or folders (glob patterns) never linted
disable = ["AX006"]               # codes never reported
```
"""

from __future__ import annotations

import errno
import fnmatch
import os
import re
import stat
import tomllib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ._rules import RULES


class LintUsageError(Exception):
    """Bad command-line input or configuration (exit status 2)."""


@dataclass(frozen=True, slots=True)
class Config:
    paths: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    disable: frozenset[str] = field(default_factory=frozenset)
    root: Path | None = None  # the folder of the pyproject.toml read (paths are relative to it)


_KEYS = {"paths", "exclude", "disable"}


def find_pyproject(start: Path) -> Path | None:
    """The nearest pyproject.toml in `start` or a folder above it."""
    here = start.resolve()
    if here.is_file():
        here = here.parent
    for folder in (here, *here.parents):
        candidate = folder / "pyproject.toml"
        if candidate.is_file():
            return candidate
    return None


def load_config(pyproject: Path | None) -> Config:
    """Read `[tool.axischeck.lint]` (a missing file or table means the defaults)."""
    if pyproject is None:
        return Config()
    try:
        with pyproject.open("rb") as f:
            data = tomllib.load(f)
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError) as err:
        raise LintUsageError(f"cannot read {pyproject}: {err}") from None
    table = data.get("tool", {}).get("axischeck", {}).get("lint", {})
    if not isinstance(table, dict):
        raise LintUsageError(f"[tool.axischeck.lint] in {pyproject} must be a table")
    unknown = sorted(set(table) - _KEYS)
    if unknown:
        raise LintUsageError(
            f"unknown key {unknown[0]!r} in [tool.axischeck.lint] of {pyproject} (known: {', '.join(sorted(_KEYS))})"
        )
    lists = {}
    for key in _KEYS:
        value = table.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise LintUsageError(f"{key} in [tool.axischeck.lint] of {pyproject} must be a list of strings")
        lists[key] = value
    return Config(
        paths=tuple(lists["paths"]),
        exclude=tuple(lists["exclude"]),
        disable=parse_codes(lists["disable"], f"disable in {pyproject}"),
        root=pyproject.parent,
    )


def parse_codes(items: Iterable[str], where: str) -> frozenset[str]:
    """Codes from a list, each item possibly comma-separated ("AX001,AX004")."""
    codes = {c.strip().upper() for item in items for c in item.split(",") if c.strip()}
    bad = sorted(codes - set(RULES))
    if bad:
        raise LintUsageError(f"unknown code {bad[0]!r} in {where} (codes: {', '.join(RULES)})")
    return frozenset(codes)


# Folders never entered when walking a directory (a file named on the command line is
# always linted).
_SKIP_DIRS = frozenset({"__pycache__", "node_modules", "site-packages", "venv", "build", "dist", "__pypackages__"})


def python_files(
    paths: Iterable[str],
    exclude: Iterable[str],
    root: Path | None,
    markdown: bool = False,
    skipped: list[str] | None = None,
) -> Iterator[Path]:
    """The files to lint, each once, in a stable order (a folder's .py, .pyi and .ipynb files,
    and its .md files with `markdown`; a file named explicitly is always linted, .md as
    Markdown, .ipynb as a notebook).

    A name that is not a regular file (a symlink loop, a named pipe, a socket) is skipped,
    with the reason appended to `skipped`: reading a pipe would wait forever, and one bad
    entry must not cost the findings of the others.
    """
    patterns = tuple(p.rstrip("/") for p in exclude)
    seen: set[Path] = set()
    for given in paths:
        path = Path(given)
        if not os.path.lexists(path):
            raise LintUsageError(f"no such file or directory: {given}")
        if path.is_dir():
            candidates: Iterable[Path] = _walk(
                path, patterns, root, (".py", ".pyi", ".ipynb", ".md") if markdown else (".py", ".pyi", ".ipynb")
            )
        else:
            candidates = [path]
        for file in candidates:
            problem = _not_regular(file)
            if problem is not None:
                if skipped is not None:
                    skipped.append(f"{file}: {problem}")
                continue
            key = file.resolve()
            if key not in seen and not (path.is_dir() and _excluded(file, patterns, root)):
                seen.add(key)
                yield file


def _not_regular(path: Path) -> str | None:
    """Why `path` cannot be read as a source file, or None when it can."""
    try:
        mode = os.stat(path).st_mode  # follows symlinks: a loop raises ELOOP
    except OSError as err:
        if err.errno == errno.ELOOP:
            return "a symlink loop"
        return f"cannot be read ({err.strerror or type(err).__name__})"
    if not stat.S_ISREG(mode):
        return "not a regular file (a named pipe, socket or device)"
    return None


def _walk(top: Path, patterns: tuple[str, ...], root: Path | None, suffixes: tuple[str, ...]) -> Iterator[Path]:
    for folder, dirs, files in os.walk(top):
        dirs[:] = sorted(
            d
            for d in dirs
            if not d.startswith(".") and d not in _SKIP_DIRS and not _excluded(Path(folder, d), patterns, root)
        )
        for name in sorted(files):
            if name.endswith(suffixes):
                yield Path(folder, name)


def _excluded(path: Path, patterns: tuple[str, ...], root: Path | None) -> bool:
    """A pattern matches the path relative to the config's folder, or any trailing part of it
    (`tests/lint_cases` excludes `/work/repo/tests/lint_cases`, `*_pb2.py` any such file)."""
    if not patterns:
        return False
    texts = {path.as_posix()}
    if root is not None:
        try:
            texts.add(path.resolve().relative_to(root.resolve()).as_posix())
        except ValueError:
            pass
    parts = path.resolve().parts
    texts.update("/".join(parts[i:]) for i in range(1, len(parts)))
    return any(fnmatch.fnmatchcase(text, pattern) or text == pattern for text in texts for pattern in patterns)


_IGNORE = re.compile(r"#\s*axischeck:\s*ignore\b(?:\[([A-Za-z0-9_,\s]*)\])?")


def suppressed(line: str, code: str) -> bool:
    """`# axischeck: ignore` (every code) or `# axischeck: ignore[AX001, AX004]` on the line."""
    if "axischeck" not in line:
        return False
    for m in _IGNORE.finditer(line):
        if m.group(1) is None:
            return True
        if code in {c.strip().upper() for c in m.group(1).split(",")}:
            return True
    return False
