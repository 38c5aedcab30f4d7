"""`axischeck run`: run someone else's program with `jax.vmap` & co. routed through axischeck.

    axischeck run train.py --steps 10        # like `python train.py --steps 10`
    axischeck run -m mypackage.cli --help    # like `python -m mypackage.cli --help`

The program runs in this process, as Python would run it (`__name__ == "__main__"`, an
absolute `__file__`, a real `__loader__`, the same `sys.argv` and `sys.path[0]`), with
`axischeck.patch()` on from the moment it first imports jax until its main code returns.
Nothing here imports jax before the program does: JAX reads settings such as
`JAX_ENABLE_X64` and `JAX_PLATFORMS` from the environment when it is imported, and a program
may set them first. Its output and exit status are its own; an exception it
does not catch prints the traceback Python prints (an `AxisCheckError` carries the
explanation and JAX's text in its message) and exits 1. Only our own usage errors (no
program, a missing file or module) exit 2 with one line.
"""

from __future__ import annotations

import builtins
import dataclasses
import importlib.machinery
import importlib.util
import os
import runpy
import sys
import types
import zipfile
from collections.abc import Sequence
from typing import Literal

__all__ = ["USAGE", "Program", "RunUsageError", "parse_program", "run_program"]

USAGE = """\
usage: axischeck run SCRIPT [ARG ...]
       axischeck run -m MODULE [ARG ...]

Run a Python program as `python SCRIPT` / `python -m MODULE` would, with jax.vmap, jax.pmap,
jax.shard_map and jax.smap routed through axischeck (axischeck.patch()). Every argument after
SCRIPT or MODULE goes to the program; write `axischeck run -- SCRIPT` for a script whose
name starts with '-'. The exit status is the program's (1 for an uncaught exception)."""


class RunUsageError(Exception):
    """Malformed `axischeck run` input: the command line reports it in one line (exit 2)."""


def _quote(text: str) -> str:
    """axischeck's quoting for messages, imported when a message is written: its module
    imports jax, which must wait for the program."""
    from ._core._dims import quote as quote_text

    return quote_text(text)


@dataclasses.dataclass(frozen=True, slots=True)
class Program:
    """What to run: a script path (file, directory or zip with `__main__.py`) or a module
    name, and the arguments it gets as `sys.argv[1:]`."""

    kind: Literal["path", "module"]
    target: str
    args: tuple[str, ...]


def parse_program(argv: Sequence[str]) -> Program | None:
    """The program named by the words after `axischeck run` (None for `-h` / `--help`).

    Options are read only before the program, as Python reads its own: everything after the
    script or module name belongs to the program, `--help` included.
    """
    words = list(argv)
    if not words:
        raise RunUsageError("run needs a program: axischeck run SCRIPT [ARG ...] or axischeck run -m MODULE [ARG ...]")
    first, rest = words[0], words[1:]
    if first in ("-h", "--help"):
        return None
    if first.startswith("-m"):
        # `-m name` and `-mname`, as Python spells it.
        if first == "-m":
            if not rest:
                raise RunUsageError("run -m needs a module name: axischeck run -m MODULE [ARG ...]")
            name, rest = rest[0], rest[1:]
        else:
            name = first[2:]
        if not all(part.isidentifier() for part in name.split(".")):
            raise RunUsageError(f"run -m: {_quote(name)} is not a module name (write dotted.module.name)")
        return Program("module", name, tuple(rest))
    if first == "--":
        if not rest:
            raise RunUsageError("run needs a script after '--': axischeck run -- SCRIPT [ARG ...]")
        first, rest = rest[0], rest[1:]
    elif first.startswith("-"):
        raise RunUsageError(
            f"run does not take the option {_quote(first)}: give SCRIPT or -m MODULE first"
            " (write `axischeck run -- SCRIPT` for a script whose name starts with '-')"
        )
    _check_path(first)
    return Program("path", first, tuple(rest))


def _check_path(path: str) -> None:
    """Refuse what Python would refuse to open, before anything is patched or imported."""
    if not path:
        raise RunUsageError("run needs a script path, got ''")
    if not os.path.exists(path):  # False also for a path Python cannot pass to the OS (a NUL byte)
        raise RunUsageError(f"can't open file {_quote(path)}: no such file or directory")
    if os.path.isdir(path) and not any(
        os.path.isfile(os.path.join(path, main)) for main in ("__main__.py", "__main__.pyc")
    ):
        raise RunUsageError(f"can't find a '__main__' module in {_quote(path)}")


def _check_module(name: str) -> None:
    """Refuse a module that is not there, as `python -m` does (this imports its parent
    packages, as Python's own lookup does; their errors are the program's, not ours)."""
    try:
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.submodule_search_locations is not None:
            # A package runs its `__main__` submodule, as with `python -m package`.
            main = f"{name}.__main__"
            if importlib.util.find_spec(main) is None:
                raise RunUsageError(f"run -m: {_quote(name)} is a package with no __main__ module")
    except ModuleNotFoundError as err:
        missing = err.name or ""
        if not (name == missing or name.startswith(f"{missing}.")):
            raise  # an import inside one of its packages failed: the program's error
        spec = None
    if spec is None:
        raise RunUsageError(f"run -m: no module named {_quote(name)}")


def run_program(program: Program) -> int:
    """Run `program` patched and return its exit status, as the interpreter would set it.

    `sys.argv` and `sys.path[0]` are what `python` would give the program (the script and
    its arguments, the script's directory; for `-m`, the module's file and the current
    directory), and both are put back afterwards, as is everything `patch()` replaced.
    Raises `RunUsageError` (nothing run) when the module is not there.
    """
    from ._patch import patch_at_jax_import

    saved_argv, saved_path = sys.argv, list(sys.path)
    if program.kind == "module":
        sys.argv = ["-m", *program.args]  # runpy puts the module's file there while it runs
        path0: list[str] = [os.getcwd()]
    else:
        sys.argv = [program.target, *program.args]
        # A script runs with its (real) directory first on sys.path; a directory or zip is
        # put there by runpy itself.
        path0 = [] if os.path.isdir(program.target) else [os.path.dirname(os.path.realpath(program.target))]
    sys.path[:1] = path0  # in place of ours: the console script's folder, or the cwd for -m
    try:
        with patch_at_jax_import():
            try:
                if program.kind == "module":
                    _check_module(program.target)
                    runpy.run_module(program.target, run_name="__main__", alter_sys=True)
                elif _is_script_file(program.target):
                    _run_script(program.target)
                else:  # a directory or zip file: runpy finds its __main__ as Python does
                    runpy.run_path(program.target, run_name="__main__")
            except RunUsageError:
                raise
            except SystemExit as done:
                return _exit_status(done)
            except Exception as err:
                _print_uncaught(err)
                return 1
        return 0
    finally:
        sys.argv = saved_argv
        sys.path[:] = saved_path


def _is_script_file(path: str) -> bool:
    return os.path.isfile(path) and not zipfile.is_zipfile(path)


def _run_script(path: str) -> None:
    """Run a script file as `python path` does (CPython's `_PyRun_SimpleFileObject`).

    Its module is a fresh `__main__` (in `sys.modules` while it runs, so pickle and
    `multiprocessing` find the program's own classes) whose `__file__` is the absolute path
    (Python makes it absolute since 3.9), with `__cached__` None, `__spec__` None (no import
    found it) and a `SourceFileLoader` (`SourcelessFileLoader` for a .pyc) named `__main__`
    as `__loader__`; its code's file name is that absolute path, as in Python's tracebacks.
    The import system reads, compiles and runs it (`exec_module`), as for any module.
    """
    filename = os.path.abspath(path)
    with open(filename, "rb") as file:
        compiled = file.read(4) == importlib.util.MAGIC_NUMBER
    loader: importlib.machinery.SourceFileLoader | importlib.machinery.SourcelessFileLoader
    runner: importlib.machinery.SourceFileLoader | importlib.machinery.SourcelessFileLoader
    if compiled:
        loader = runner = importlib.machinery.SourcelessFileLoader("__main__", filename)
    else:
        loader = importlib.machinery.SourceFileLoader("__main__", filename)
        runner = _ScriptLoader("__main__", filename)
    main = types.ModuleType("__main__")
    vars(main).update(__file__=filename, __cached__=None, __loader__=loader, __builtins__=builtins)
    saved_main = sys.modules.get("__main__")
    sys.modules["__main__"] = main
    try:
        runner.exec_module(main)
    finally:
        if saved_main is not None:
            sys.modules["__main__"] = saved_main


class _ScriptLoader(importlib.machinery.SourceFileLoader):
    """Python's source loader, writing no bytecode beside the script (`python path` writes
    none for its main file); the program sees a plain `SourceFileLoader` as its loader."""

    def set_data(self, path: str, data: object, *, _mode: int = 0o666) -> None:
        pass


def _exit_status(done: SystemExit) -> int:
    """The status Python exits with for this SystemExit (a non-int code is printed, then 1)."""
    code = done.code
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


# The modules between `run_program` and the program's first frame: this one, runpy, and
# the import system (a `-m` program's parent packages are imported by `find_spec`).
_RUNNER_MODULES = frozenset(
    {__name__, "runpy", "importlib.util", "importlib._bootstrap", "importlib._bootstrap_external"}
)


def _print_uncaught(err: BaseException) -> None:
    """Print `err` through `sys.excepthook`, as the interpreter does for an uncaught
    exception, without the frames of this runner and runpy above the program's own."""
    tb: types.TracebackType | None = err.__traceback__
    while tb is not None and tb.tb_frame.f_globals.get("__name__") in _RUNNER_MODULES:
        tb = tb.tb_next
    # The default hook prints the exception's own `__traceback__` when it has one.
    sys.excepthook(type(err), err.with_traceback(tb), tb)
