"""A lint run: the linted files as one project (imports between them are followed)."""

from __future__ import annotations

import ast
import gc
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ._axisnames import AxisNames
from ._batch import check_calls
from ._callee import Resolver
from ._checks import Related, SiteChecker
from ._config import suppressed
from ._edits import edit_for
from ._keys import check_shared_keys
from ._layout import check_layout_kept
from ._markdown import python_of_markdown
from ._module import ModuleInfo, build_module
from ._notebook import NotANotebook, NotebookCode, read_notebook
from ._outputs import check_copies_stacked, check_outputs, check_scan_carries, check_size_one_axes
from ._rules import Finding, Location
from ._values import Values, as_option

# Only a file that names a transform can hold a finding (cross-file uses are not followed
# for axis names, and every other check starts at a transform): others are parsed only
# when another file imports from them.
_KEYWORDS = ("vmap", "pmap", "shard_map", "smap")

# A file whose syntax tree nests deeper than the linter's recursion reaches (the common
# deep forms, long sums and `elif` chains, are walked without recursion) is left out of
# the run with a warning, as a file that cannot be parsed is: the others are linted.
_TOO_DEEP = "{}: nested too deeply for the linter to read"


@dataclass(slots=True)
class Stats:
    files: int = 0
    lines: int = 0
    analysed: int = 0  # files that name a transform
    sites: int = 0  # transform applications found
    understood: int = 0  # ... whose mapped function was resolved
    calls_read: int = 0  # calls of a transformed function with every argument read (AX013-AX016)
    unparsable: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # names that are not regular files, with the reason


class Project:
    def __init__(
        self, files: Sequence[Path], display: dict[Path, str] | None = None, texts: dict[Path, str] | None = None
    ) -> None:
        self.files = list(files)
        self.display = display or {}
        self.texts = texts or {}  # files' texts given, not read from disk (an editor's unsaved buffers)
        self._sources: dict[Path, str] = {}
        self._notebooks: dict[Path, NotebookCode] = {}  # a notebook's code cells, and where each line is
        self._modules: dict[Path, ModuleInfo | None] = {}
        self._by_parts: dict[tuple[str, ...], list[Path]] = {}
        for f in self.files:
            parts = _parts(f)
            for i in range(len(parts)):
                self._by_parts.setdefault(parts[i:], []).append(f)
        self.resolver = Resolver(self.find_module)
        self.axis_names = AxisNames(self.resolver)
        self.values = Values(self.resolver)
        self.resolver.parameters = self.values.parameter_sources
        self._options: dict[int, object] = {}
        self.stats = Stats()
        self.findings: list[Finding] = []
        self._reported: set[Finding] = set()  # the same findings, to drop one reported twice

    # -------------------------------------------------------------- modules

    def source(self, path: Path) -> str | None:
        """The file's Python code: its text, or a notebook's code cells joined (None when it
        cannot be read; a notebook that is not one is reported as unparsable)."""
        if path not in self._sources:
            try:
                # utf-8-sig: a byte order mark is not source text (Python's own reader drops it too).
                text = (
                    self.texts[path] if path in self.texts else path.read_bytes().decode("utf-8-sig", errors="replace")
                )
            except OSError:
                return None
            if path.suffix.lower() == ".ipynb":
                try:
                    notebook = read_notebook(text)
                except NotANotebook as err:
                    self.stats.unparsable.append(f"{self.name(path)}:1: {err}")
                    return None
                self._notebooks[path] = notebook
                text = notebook.source
            self._sources[path] = text
        return self._sources[path]

    def module(self, path: Path) -> ModuleInfo | None:
        if path in self._modules:
            return self._modules[path]
        source = self.source(path)
        info = None
        if source is not None:
            try:
                shift: dict[int, int] = {}
                if path.suffix.lower() == ".md":
                    source, tree, shift = python_of_markdown(source)
                else:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")  # invalid escape sequences and the like in linted code
                        tree = ast.parse(source, filename=str(path))
            except (SyntaxError, ValueError, MemoryError, RecursionError) as err:
                line = getattr(err, "lineno", None)
                self.stats.unparsable.append(f"{self.name(path)}:{line or 1}: {type(err).__name__}: {err}")
            else:
                parts = _parts(path)
                try:
                    info = build_module(self.name(path), source, tree, parts, path.name == "__init__.py")
                except RecursionError:
                    self.stats.skipped.append(_TOO_DEEP.format(self.name(path)))
                else:
                    info.column_shift = shift
                    info.reader = self.read_option
                    notebook = self._notebooks.get(path)
                    if notebook is not None:
                        info.cell_place = notebook.place
        self._modules[path] = info
        return info

    def read_option(self, node: ast.expr, module: ModuleInfo) -> object:
        key = id(node)  # the syntax trees live as long as the project
        if key not in self._options:
            self._options[key] = as_option(self.values.of(node, module))
        return self._options[key]

    def name(self, path: Path) -> str:
        return self.display.get(path, str(path))

    def find_module(self, dotted: str, start: ModuleInfo) -> ModuleInfo | None:
        """The linted file an import names (`pkg.mod`, `.mod`, `..`), if exactly one matches."""
        rest = dotted.lstrip(".")
        level = len(dotted) - len(rest)
        names = tuple(p for p in rest.split(".") if p)
        if level:
            package = start.parts[:-1]  # the folder of the importing file
            if level > 1:
                package = package[: len(package) - (level - 1)]
            wanted = [(*package, *names, "__init__"), (*package, *names)]
            exact = [f for w in wanted for f in self._by_parts.get(w, []) if _parts(f) == w]
            return self.module(exact[0]) if len(exact) == 1 else None
        if not names:
            return None
        beside = self._beside(names, start)
        if beside is not None:  # what `python <start's file>` imports (its folder is sys.path[0])
            linted = self._by_parts.get(beside, [])
            return self.module(linted[0]) if linted else None
        found = self._by_parts.get(names, []) + self._by_parts.get((*names, "__init__"), [])
        return self.module(found[0]) if len(found) == 1 else None

    @staticmethod
    def _beside(names: tuple[str, ...], start: ModuleInfo) -> tuple[str, ...] | None:
        """The parts of the module `names` in the importing file's own folder, where one
        is on disk there (a `.py` file or a package): Python imports that one first for a
        script run from there, whichever files are linted beside it (pre-commit passes
        `a/train.py b/utils.py`, and `from utils import ...` in a/train.py is a/utils.py)."""
        folder = Path("/", *start.parts[:-1]).joinpath(*names)
        if folder.with_suffix(".py").is_file():
            return (*start.parts[:-1], *names)
        if (folder / "__init__.py").is_file():
            return (*start.parts[:-1], *names, "__init__")
        return None

    # ------------------------------------------------------------------ run

    def run(self) -> list[Finding]:
        for path in self.files:
            source = self.source(path)
            if source is None:
                continue
            self.stats.files += 1
            self.stats.lines += source.count("\n") + (not source.endswith("\n") and bool(source))
            if not any(k in source for k in _KEYWORDS):
                continue
            module = self.module(path)
            if module is None:
                continue
            self.stats.analysed += 1
            try:
                self.lint_module(module)
            except RecursionError:  # what it found before stands; the other files are linted
                self.stats.skipped.append(_TOO_DEEP.format(self.name(path)) + " (its findings may be incomplete)")
        return self.findings

    def lint_module(self, module: ModuleInfo) -> None:
        sites = self.resolver.sites(module)
        self.stats.sites += len(sites)
        for site in sites:
            callee = self.resolver.site_callee(site)
            self.stats.understood += callee is not None
            checker = SiteChecker(self.resolver, site, callee, self.add)
            if checker.run():
                continue  # refused when the transform is made: no call of it runs
            check_outputs(checker)
            check_size_one_axes(checker, self.values)
            check_copies_stacked(checker, self.values)
            check_layout_kept(checker)
            check_scan_carries(checker, self.values)
            check_shared_keys(checker, self.values)
            self.stats.calls_read += check_calls(checker, self.values)
        self.axis_names.check_collectives(module, self.add)
        self.axis_names.check_shadowing(sites, self.add)

    def close(self) -> None:
        """Let go of the parsed files: every module's cycles are broken and every cache
        emptied, so the syntax trees are freed at once by reference counting. Without this,
        the cyclic collector would walk the hundreds of thousands of nodes of a large file
        (once when lint turns it back on, and again to free them)."""
        for module in self._modules.values():
            if module is not None:
                module.release()
        self._modules.clear()
        self._notebooks.clear()
        self._options.clear()
        self.resolver.clear()
        self.values.clear()
        self.axis_names.clear()

    def add(
        self,
        module: ModuleInfo,
        node: ast.AST,
        code: str,
        message: str,
        fix: str | None = None,
        related: Related = (),
    ) -> None:
        line = getattr(node, "lineno", 1)
        text = module.line(line)
        if suppressed(text, code):
            return
        start, end = _span(module, node)
        cell = None
        if module.cell_place is not None:
            cell, line = module.cell_place(line)
        finding = Finding(
            module.path,
            line,
            start[1] + 1,
            code,
            message,
            fix,
            cell,
            end_line=end[0] if cell is None else None,
            end_column=end[1] if cell is None else None,
            related=tuple(_location(m, n, what) for m, n, what in related if m.cell_place is None),
            edit=edit_for(module, node, fix),
        )
        if finding not in self._reported:
            self._reported.add(finding)
            self.findings.append(finding)


def _column(module: ModuleInfo, line: int, byte_offset: int) -> int:
    """A character column (from 0, in the file: Markdown's cut indentation added back) from
    `ast`'s UTF-8 byte offset."""
    text = module.line(line)
    column = byte_offset if text.isascii() else len(text.encode()[:byte_offset].decode(errors="ignore"))
    return column + module.column_shift.get(line, 0)


def _span(module: ModuleInfo, node: ast.AST) -> tuple[tuple[int, int], tuple[int, int]]:
    """(line, column) where `node` starts and ends (columns from 0)."""
    line = getattr(node, "lineno", 1)
    start = (line, _column(module, line, getattr(node, "col_offset", 0)))
    end_line, end_col = getattr(node, "end_lineno", None), getattr(node, "end_col_offset", None)
    if end_line is None or end_col is None:
        return start, start
    return start, (end_line, _column(module, end_line, end_col))


def _location(module: ModuleInfo, node: ast.AST, message: str) -> Location:
    (line, column), (end_line, end_column) = _span(module, node)
    return Location(module.path, line, column, end_line, end_column, message)


def _parts(path: Path) -> tuple[str, ...]:
    resolved = path.resolve()
    return (*resolved.parent.parts[1:], resolved.stem)


def lint_files(
    files: Iterable[Path], display: dict[Path, str] | None = None, texts: dict[Path, str] | None = None
) -> tuple[list[Finding], Stats]:
    """Lint `files` as one project; findings in file order, then line, column and code.

    The cyclic garbage collector is paused during the run: syntax trees are many small
    objects that live until the end, and in a process that has imported JAX every full
    collection would walk all of them again (it halves the speed). The run ends by letting
    go of them (`Project.close`), so the collector finds nothing of it when it resumes.
    """
    project = Project(list(files), display, texts)
    collecting = gc.isenabled()
    gc.disable()
    try:
        findings = project.run()
    finally:
        project.close()
        if collecting:
            gc.enable()
    order = {project.name(p): i for i, p in enumerate(project.files)}
    findings.sort(key=lambda f: (order.get(f.path, 0), f.cell or 0, f.line, f.column, f.code))
    return findings, project.stats
