"""The `axischeck` command: predict and explain vmap and shard_map shapes without writing code.

    axischeck predict "(a,b),(b,c),(a,c)->(a,c)" --in-axes "(0,1,0)" 16x8x4 4x16x2 16x8x2
    axischeck explain "(a,b),(b,c),(a,c)->(a,c)" --in-axes "(0,1,0)" 16x8x4 5x16x2 16x8x2
    axischeck shard "(n,k),(k,m)->(n,m)" 1024x16 16x8 --mesh data=64 \
        --in-specs "[('data',), None]" --out-specs "('data',)"
    axischeck demo
    axischeck lint src/ tests/ --format json
    axischeck run train.py --steps 10        (or: axischeck run -m package.module ...)

Axes are read with `ast.literal_eval` and signatures by axischeck's own parser; nothing
is evaluated. Exit status: 0 when the shapes agree, 1 when they do not (the explanation
is printed), 2 for malformed input (one line on stderr, never a traceback).
`axischeck --version` prints the installed version. `axischeck run` is the exception: it
exits with the status of the program it runs (see `_run.py`).
"""

from __future__ import annotations

import argparse
import ast
import inspect
import os
import re
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar, cast

from ._core._text import int_text, short_repr  # JAX-free

# The engine's modules import JAX; each command imports them where it needs them, so that
# `axischeck lint` (which reads source text only) starts without JAX.
if TYPE_CHECKING:
    from ._core._prediction import Prediction
    from ._engine._signature import Signature

P = TypeVar("P", bound="Prediction")


class UsageError(Exception):
    """Malformed command-line input (exit status 2)."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


def version() -> str:
    """The installed distribution's version (the package's own `__version__` when not installed)."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as dist_version

    try:
        return dist_version("axischeck")
    except PackageNotFoundError:
        from . import __version__

        return __version__


_SIZE = re.compile(r"[0-9]+\Z")
_SHAPE = re.compile(r"[0-9]+(?:(?:\s*[x,]\s*|\s+)[0-9]+)*\s*,?\Z")


def parse_size(text: str, what: str) -> int:
    """A size >= 0 in ASCII digits (`str.isdigit` also takes `²` and `٣`), at most int64."""
    from ._core._dims import MAX_SIZE, quote

    body = text.strip()
    if not _SIZE.match(body) or len(body.lstrip("0")) > len(str(MAX_SIZE)) or int(body) > MAX_SIZE:
        raise UsageError(f"bad {what} {quote(text)}: write a whole number of ASCII digits, at most {MAX_SIZE}")
    return int(body)


def _axis_size(text: str) -> int:
    try:
        return parse_size(text, "--axis-size")
    except UsageError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def parse_shape(text: str) -> tuple[int, ...]:
    """`16x8x4`, `16,8,4`, `(16, 8, 4)` or `[16, 8, 4]`, and `()` / `scalar` for rank 0."""
    from ._core._dims import quote

    body = text.strip()
    if body == "scalar":
        return ()
    if len(body) >= 2 and (body[0], body[-1]) in (("(", ")"), ("[", "]")):
        body = body[1:-1].strip()  # one pair of brackets, as Python prints a shape
        if not body:
            return ()
    if not _SHAPE.match(body):
        raise UsageError(f"bad shape {quote(text)}: write sizes joined by 'x', like 16x8x4 (or () for a scalar)")
    return tuple(parse_size(p, f"size in shape {quote(text)}") for p in re.split(r"[x,\s]+", body) if p)


def parse_axes(text: str, what: str) -> Any:
    """An in_axes / out_axes value: a Python literal of ints, None, tuples, lists, dicts."""
    from ._core._dims import MAX_SIZE, quote

    try:
        value = ast.literal_eval(text)
    except Exception:  # SyntaxError, ValueError (a NUL byte), TypeError ({[1]: 0}), MemoryError, RecursionError
        raise UsageError(f"bad {what} {quote(text)}: write a Python literal like 0, None or (0, 1, None)") from None
    stack = [value]
    while stack:  # an axis past int64 is no axis of any array JAX holds
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, (tuple, list)):
            stack.extend(item)
        elif isinstance(item, int) and abs(item) > MAX_SIZE:
            raise UsageError(f"bad {what} {quote(text)}: axes are small integers, and {int_text(item)} is not one")
    return value


def _build(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = _Parser(
        prog="axischeck", description="Predict and explain JAX vmap and shard_map shapes from a signature."
    )
    parser.add_argument("--version", action="version", version=f"axischeck {version()}")
    sub = parser.add_subparsers(dest="command", required=True)
    for name, help_text in (
        ("predict", "print the predicted output shapes and the derivation table"),
        ("explain", "the same, for a case you expect to fail: exits 1 with the explanation"),
    ):
        p = sub.add_parser(name, help=help_text)
        p.add_argument("signature", help='per-example signature, e.g. "(a,b),(b,c)->(a,c)" or "n f, f o -> n"')
        p.add_argument(
            "shapes", nargs="*", metavar="SHAPE", help="one batched shape per argument: 16x8x4, () for a scalar"
        )
        p.add_argument("--in-axes", default="0", help="vmap in_axes as a Python literal (default 0)")
        p.add_argument("--out-axes", default="0", help="vmap out_axes as a Python literal (default 0)")
        p.add_argument("--axis-size", type=_axis_size, default=None, help="vmap axis_size")
        p.add_argument("--axis-name", default=None, help="vmap axis_name (a dimension symbol in the signature)")
        p.add_argument("--check", action="store_true", help="no vmap: check the shapes against the signature only")
        p.add_argument("--names", default=None, help="argument names for the table, comma-separated (x,y,z)")
    p = sub.add_parser("shard", help="shard_map: global and per-device shapes on a mesh (of any size)")
    p.add_argument("signature", help='per-device signature, e.g. "(n,k),(k,m)->(n,m)"')
    p.add_argument("shapes", nargs="*", metavar="SHAPE", help="one global shape per argument: 1024x16")
    p.add_argument("--mesh", required=True, help="mesh axes and sizes: data=64,model=8")
    p.add_argument(
        "--in-specs",
        default="()",
        help="a spec for every argument, like ('data', None), or a list"
        " with one per argument ([('data',), None]; None passes it whole); default () = P()",
    )
    p.add_argument("--out-specs", default="()", help="the outputs' spec (or a tuple of them for several)")
    p.add_argument("--axis-names", default=None, help="the manual mesh axes, comma-separated (default: all)")
    p.add_argument("--names", default=None, help="argument names for the table, comma-separated (x,y,z)")
    p = sub.add_parser("infer", help="infer a function's per-example signature from example shapes")
    p.add_argument("function", help="MODULE:FUNCTION (imported from the current directory or the installed ones)")
    p.add_argument("shapes", nargs="*", metavar="SHAPE", help="one batched shape per argument: 16x8x4, () for a scalar")
    p.add_argument("--transform", default="vmap", choices=("vmap", "pmap"), help="how it is mapped (default vmap)")
    p.add_argument("--in-axes", default="0", help="in_axes as a Python literal (default 0)")
    p.add_argument(
        "--style", default="signature", choices=("signature", "annotated", "jaxtyping"), help="how to print it"
    )
    sub.add_parser("demo", help="walk through the einsum example and friends: predicted, run, explained")
    p = sub.add_parser("lint", help="find axis mistakes in Python source without running it")
    p.add_argument("paths", nargs="*", metavar="PATH", help="files or folders (default: paths in pyproject.toml)")
    p.add_argument("--format", default="text", help="text (default), json, sarif or github")
    p.add_argument("--disable", action="append", default=[], metavar="CODES", help="codes not to report: AX003,AX006")
    p.add_argument("--exclude", action="append", default=[], metavar="PATTERN", help="files or folders to skip")
    p.add_argument("--no-config", action="store_true", help="ignore [tool.axischeck.lint] in pyproject.toml")
    p.add_argument("--markdown", action="store_true", help="also lint the Python cells of .md files in folders")
    p.add_argument("--statistics", action="store_true", help="print counts of files, lines and sites to stderr")
    p = sub.add_parser("lsp", help="a language server over stdio: lint's findings, shapes and fixes in the editor")
    p.add_argument("--debounce-ms", type=int, default=50, help="pause after a change before linting (default 50)")
    # Listed for --help only: `run` is dispatched before argparse (see `run()`), which would
    # take the program's own options (`-m`, `--help`, `--`) for ours.
    p = sub.add_parser("run", help="run a Python program with jax.vmap & co. routed through axischeck", add_help=False)
    p.add_argument("program", nargs=argparse.REMAINDER, help="SCRIPT [ARG ...] or -m MODULE [ARG ...]")
    # Shapes may follow the options (argparse stops a '*' positional at the first option).
    args, extra = parser.parse_known_args(argv)
    if extra and args.command in ("predict", "explain", "shard", "infer"):
        unknown = [e for e in extra if e.startswith("--")]
        if unknown:
            raise UsageError(f"unrecognized arguments: {' '.join(unknown)}")
        args.shapes = list(args.shapes) + list(extra)
    elif extra:
        raise UsageError(f"unrecognized arguments: {' '.join(extra)}")
    return args


def run(argv: Sequence[str] | None = None) -> int:
    """Run the command line `argv` (default: `sys.argv[1:]`) and return the exit status."""
    words = list(sys.argv[1:] if argv is None else argv)
    if words[:1] == ["run"]:
        return _run_program(words[1:])
    try:
        return _run(words)
    except SystemExit as done:  # argparse after --help or --version (status 0)
        return done.code if isinstance(done.code, int) else 0
    except UsageError as err:
        return _usage_error(str(err))
    except Exception as err:  # a bug, but the command line still gets one line, not a traceback
        return _usage_error(f"internal error: {type(err).__name__}: {err} (please report this)")


def _run_program(argv: Sequence[str]) -> int:
    """`axischeck run ...`: the program's own exit status, or 2 for our usage errors.

    Outside `run()`'s catch-all: the program's exceptions are its own, and `run_program`
    reports them as Python would.
    """
    from ._run import USAGE, RunUsageError, parse_program, run_program

    try:
        program = parse_program(argv)
        if program is None:
            print(USAGE)
            return 0
    except RunUsageError as err:
        return _usage_error(str(err))
    except Exception as err:  # as in run(): one line, never a traceback, for our own part
        return _usage_error(f"internal error: {type(err).__name__}: {err} (please report this)")
    try:
        return run_program(program)
    except RunUsageError as err:  # the module to run is not there
        return _usage_error(str(err))


def _usage_error(message: str) -> int:
    one_line = message.replace("\r", "\\r").replace("\n", "\\n")
    if len(one_line) > 2000:
        one_line = one_line[:2000] + "..."
    print(f"axischeck: error: {one_line} (see axischeck --help)", file=sys.stderr)
    return 2


def _run(argv: Sequence[str] | None) -> int:
    try:
        args = _build(argv)
        if args.command == "demo":
            from ._demo import main as demo

            return demo()
        if args.command == "lint":
            return _lint(args)
        if args.command == "lsp":
            from ._lsp import main as lsp

            return lsp([f"--debounce-ms={args.debounce_ms}"])
        if args.command == "run":  # only behind something argparse took as a global option
            raise UsageError("run must come first: axischeck run SCRIPT [ARG ...] or axischeck run -m MODULE [ARG ...]")
        from ._core._dims import quote
        from ._core._errors import AxisCheckError
        from ._core._explain import render_steps
        from ._core._trees import shapes_text
        from ._engine._signature import Signature

        shapes = [parse_shape(s) for s in args.shapes]
        if args.command == "shard":
            return _shard(args, shapes)
        if args.command == "infer":
            return _infer(args, shapes)
        in_axes = parse_axes(args.in_axes, "--in-axes")
        out_axes = parse_axes(args.out_axes, "--out-axes")
        names = [n.strip() for n in args.names.split(",")] if args.names is not None else None
        if names is not None and (len(names) != len(shapes) or not all(n.isidentifier() for n in names)):
            raise UsageError(f"--names needs {len(shapes)} comma-separated identifiers, got {quote(args.names or '')}")
        try:
            sig = Signature(args.signature)
            if names is not None:
                sig = Signature._make(sig.core.with_params(names))
            if not args.check:
                sig = sig.vmap(in_axes, out_axes, axis_size=args.axis_size, axis_name=args.axis_name)
        except AxisCheckError as err:
            raise UsageError(str(err).splitlines()[0]) from None
    except UsageError as err:
        return _usage_error(str(err))
    return _report(
        lambda: _advised_prediction(sig, shapes),
        lambda pred: [f"predicted: {shapes_text(pred.shapes)}", f"batched signature: {sig}", render_steps(pred.steps)],
    )


def _advised_prediction(sig: Signature, shapes: list[Any]) -> Any:
    """The signature's prediction, or its error with the fixes the engine checked."""
    from ._advice import advise_signature
    from ._core._errors import AxisCheckError

    try:
        return sig.predict(*shapes)
    except AxisCheckError as err:
        raise advise_signature(sig.model(), sig.labelled(tuple(shapes), {}), err) from err.__cause__


def load_function(target: str) -> Any:
    """`module:attr.attr` imported from the current directory (as `python -m` would find
    it) or the installed packages; never evaluated as code."""
    import importlib

    from ._core._dims import quote

    module_name, sep, attrs = target.partition(":")
    if not sep or not module_name or not all(p.isidentifier() for p in [*module_name.split("."), *attrs.split(".")]):
        raise UsageError(f"bad function {quote(target)}: write MODULE:FUNCTION, like mymodel:loss")
    if "" not in sys.path and os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        obj: Any = importlib.import_module(module_name)
    except ImportError as err:
        raise UsageError(f"cannot import {module_name}: {err}") from None
    for attr in attrs.split("."):
        if not hasattr(obj, attr):
            raise UsageError(f"{module_name} has no {attrs}")
        obj = getattr(obj, attr)
    if not callable(obj):
        raise UsageError(f"{target} is a {type(obj).__name__}, not a function")
    return obj


def _infer(args: argparse.Namespace, shapes: list[tuple[int, ...]]) -> int:
    """`axischeck infer`: the signature to paste, on stdout; what it could not settle, on stderr."""
    from ._core._errors import AxisCheckError
    from ._pmap import pmap
    from ._transform import Transformed
    from ._vmap import vmap

    fun = _unmapped(load_function(args.function), args.function)
    in_axes = parse_axes(args.in_axes, "--in-axes")
    try:
        mapped: Transformed[..., Any]
        if isinstance(fun, Transformed):
            mapped = fun
        elif args.transform == "pmap":
            mapped = pmap(cast(Callable[..., Any], fun), in_axes=in_axes)
        else:
            mapped = vmap(cast(Callable[..., Any], fun), in_axes=in_axes)
        sig = mapped.infer_signature(*shapes)
    except AxisCheckError as err:
        print(f"{type(err).__name__}: {err}")
        return 1
    print(sig.as_code(args.style))
    for note in sig.notes:
        print(f"note: {note}", file=sys.stderr)
    return 0


def _unmapped(fun: Any, target: str) -> Any:
    """`fun`, or the axischeck transform inside its `jax.jit` (`__wrapped__`, as
    `functools.wraps` records it); a function JAX already mapped is refused (UsageError):
    mapping it again would describe the batched function as one example's."""
    from ._core._jax_compat import jax_transform_of
    from ._transform import Transformed

    layer, outer = fun, ""
    for _ in range(8):  # jit(jit(...)) nests a few deep at most
        if isinstance(layer, Transformed):
            return layer  # inside jit: jit does not change shapes, the transform answers
        transform = jax_transform_of(layer)
        if transform is not None:
            inner = getattr(layer, "__wrapped__", None)
            module = sys.modules.get(target.partition(":")[0])
            names = [k for k, v in vars(module).items() if v is inner] if module is not None and inner else []
            point = f"{target.partition(':')[0]}:{names[0]}" if names else "the function it maps"
            raise UsageError(
                f"{target} is already mapped by {transform}{outer}: infer maps the function it is given, so"
                f" point it at {point}, with the shapes and --in-axes of that {transform} call"
                " (or wrap it in an axischeck transform instead of JAX's)"
            )
        wrapped = getattr(layer, "__wrapped__", None)
        if wrapped is None:
            return fun
        if not outer:
            outer = " inside jax.jit" if type(layer).__name__ == "PjitFunction" else " inside a wrapper"
        layer = wrapped
    return fun


def _report(predict: Callable[[], P], lines: Callable[[P], list[str]]) -> int:
    """Print the prediction (exit 0), or the explanation of why there is none (exit 1)."""
    from ._core._errors import AxisCheckError

    try:
        pred = predict()
    except AxisCheckError as err:
        print(f"{type(err).__name__}: {err}")
        return 1
    print("\n".join(lines(pred)))
    return 0


def parse_mesh(text: str) -> dict[str, int]:
    """`data=64,model=8` -> {"data": 64, "model": 8}."""
    from ._core._dims import quote

    mesh: dict[str, int] = {}
    for part in (p.strip() for p in text.split(",") if p.strip()):
        name, _, size = part.partition("=")
        name = name.strip()
        if not name.isidentifier() or not _SIZE.match(size.strip()) or name in mesh:
            raise UsageError(f"bad --mesh {quote(text)}: write axis=size pairs, like data=64,model=8")
        n = parse_size(size, f"--mesh size for {name!r}")
        if n < 1:
            raise UsageError(f"bad --mesh {quote(text)}: axis {name!r} needs a size of at least 1")
        mesh[name] = n
    if not mesh:
        raise UsageError("--mesh needs at least one axis, like data=8")
    return mesh


def _spec(value: Any, what: str) -> Any:
    """A literal spec (`('x', None)`, `'x'`, `()`) as a PartitionSpec; None stays None."""
    from jax.sharding import PartitionSpec

    if value is None:
        return None
    entries = (value,) if isinstance(value, str) else value
    if not isinstance(entries, tuple) or not all(
        e is None or isinstance(e, str) or (isinstance(e, tuple) and all(isinstance(n, str) for n in e))
        for e in entries
    ):
        raise UsageError(
            f"bad {what} entry {short_repr(value)}: write a tuple of axis names, None or tuples, like ('x', None)"
        )
    return PartitionSpec(*entries)  # type: ignore[no-untyped-call]


def parse_specs(text: str, what: str) -> Any:
    """One spec for every argument (a tuple), or a list of one per argument."""
    value = parse_axes(text, what)
    if isinstance(value, list):
        return tuple(_spec(v, what) for v in value)
    return _spec(value, what)


def _shard(args: argparse.Namespace, shapes: list[tuple[int, ...]]) -> int:
    """`axischeck shard`: shard_map shapes from a per-device signature; no function runs."""
    from ._core._dims import quote
    from ._core._errors import AxisCheckError
    from ._core._trees import shapes_text
    from ._engine._signature import Signature
    from ._shard_map import shard_map

    mesh = parse_mesh(args.mesh)
    in_specs = parse_specs(args.in_specs, "--in-specs")
    out_specs = parse_specs(args.out_specs, "--out-specs")  # a list: one per output
    axis_names = frozenset(n.strip() for n in args.axis_names.split(",")) if args.axis_names else frozenset()
    names = (
        [n.strip() for n in args.names.split(",")] if args.names is not None else [f"x{i}" for i in range(len(shapes))]
    )
    if len(names) != len(shapes) or not all(n.isidentifier() for n in names):
        raise UsageError(f"--names needs {len(shapes)} comma-separated identifiers, got {quote(args.names or '')}")

    def per_device(*blocks: Any) -> Any:  # never called: the signature answers
        raise AssertionError("axischeck shard traced its stand-in function")

    # Messages name the arguments as --names says (or x0, x1, ...).
    per_device.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter(n, inspect.Parameter.POSITIONAL_ONLY) for n in names]
    )

    try:
        sig = Signature._make(Signature(args.signature).core.with_params(names))
        # check_vma=False: with no function there is no trace to settle a replication promise.
        mapped = shard_map(
            per_device,
            mesh=mesh,
            in_specs=in_specs,
            out_specs=out_specs,
            axis_names=axis_names,
            check_vma=False,
            signature=sig,
        )
    except AxisCheckError as err:
        raise UsageError(str(err).splitlines()[0]) from None
    return _report(
        lambda: mapped.predict(*shapes),
        lambda pred: [
            f"predicted: {shapes_text(pred.shapes)}; per device: {shapes_text(pred.block_shapes)}",
            str(pred),
        ],
    )


def _lint(args: argparse.Namespace) -> int:
    """`axischeck lint`: findings on stdout, exit 1 when there are any."""
    from ._lint import LintUsageError
    from ._lint import run as lint

    try:
        return lint(
            args.paths,
            fmt=args.format,
            disable=args.disable,
            exclude=args.exclude,
            use_config=not args.no_config,
            markdown=args.markdown,
            statistics=args.statistics,
            version=version(),
        )
    except LintUsageError as err:
        raise UsageError(str(err)) from None


def main(argv: Sequence[str] | None = None) -> int:
    """The `axischeck` console script: returns the exit status (the script wrapper exits with it)."""
    return run(argv)
