"""The `axischeck` command: predict and explain vmap shapes without writing code.

    axischeck predict "(a,b),(b,c),(a,c)->(a,c)" --in-axes "(0,1,0)" 16x8x4 4x16x2 16x8x2
    axischeck explain "(a,b),(b,c),(a,c)->(a,c)" --in-axes "(0,1,0)" 16x8x4 5x16x2 16x8x2
    axischeck demo

Axes are read with `ast.literal_eval` and signatures by axischeck's own parser; nothing
is evaluated. Exit status: 0 when the shapes agree, 1 when they do not (the explanation
is printed), 2 for malformed input.
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from ._errors import AxisCheckError
from ._explain import render_steps
from ._signature import Signature
from ._transform import _shapes_text


class UsageError(Exception):
    """Malformed command-line input (exit status 2)."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


def parse_shape(text: str) -> tuple[int, ...]:
    """`16x8x4`, `16,8,4`, `(16, 8, 4)`, or `()` / `scalar` for rank 0."""
    body = text.strip().strip("()[]").strip()
    if body in ("", "scalar"):
        return ()
    parts = [p for p in re.split(r"[x,\s]+", body) if p]
    if not parts or not all(p.isdigit() for p in parts):
        raise UsageError(f"bad shape {text!r}: write sizes joined by 'x', like 16x8x4 (or () for a scalar)")
    return tuple(int(p) for p in parts)


def parse_axes(text: str, what: str) -> Any:
    """An in_axes / out_axes value: a Python literal of ints, None, tuples, lists, dicts."""
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        raise UsageError(f"bad {what} {text!r}: write a Python literal like 0, None or (0, 1, None)") from None
    return value


def _build(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = _Parser(prog="axischeck", description="Predict and explain JAX vmap shapes from a signature.")
    sub = parser.add_subparsers(dest="command", required=True)
    for name, help_text in (
        ("predict", "print the predicted output shapes and the derivation table"),
        ("explain", "the same, for a case you expect to fail: exits 1 with the explanation"),
    ):
        p = sub.add_parser(name, help=help_text)
        p.add_argument("signature", help='per-example signature, e.g. "(a,b),(b,c)->(a,c)" or "n f, f o -> n"')
        p.add_argument("shapes", nargs="*", metavar="SHAPE", help="one batched shape per argument: 16x8x4, () for a scalar")
        p.add_argument("--in-axes", default="0", help="vmap in_axes as a Python literal (default 0)")
        p.add_argument("--out-axes", default="0", help="vmap out_axes as a Python literal (default 0)")
        p.add_argument("--axis-size", type=int, default=None, help="vmap axis_size")
        p.add_argument("--axis-name", default=None, help="vmap axis_name (a dimension symbol in the signature)")
        p.add_argument("--check", action="store_true", help="no vmap: check the shapes against the signature only")
        p.add_argument("--names", default=None, help="argument names for the table, comma-separated (x,y,z)")
    sub.add_parser("demo", help="walk through the seed article's examples")
    # Shapes may follow the options (argparse stops a '*' positional at the first option).
    args, extra = parser.parse_known_args(argv)
    if extra and args.command in ("predict", "explain"):
        unknown = [e for e in extra if e.startswith("--")]
        if unknown:
            raise UsageError(f"unrecognized arguments: {' '.join(unknown)}")
        args.shapes = list(args.shapes) + list(extra)
    elif extra:
        raise UsageError(f"unrecognized arguments: {' '.join(extra)}")
    return args


def run(argv: Sequence[str] | None = None) -> int:
    try:
        args = _build(argv)
        if args.command == "demo":
            from ._demo import main as demo

            return demo()
        shapes = [parse_shape(s) for s in args.shapes]
        in_axes = parse_axes(args.in_axes, "--in-axes")
        out_axes = parse_axes(args.out_axes, "--out-axes")
        names = [n.strip() for n in args.names.split(",")] if args.names else None
        if names is not None and (len(names) != len(shapes) or not all(n.isidentifier() for n in names)):
            raise UsageError(f"--names needs {len(shapes)} comma-separated identifiers, got {args.names!r}")
        try:
            sig = Signature(args.signature)
            if names is not None:
                sig = Signature._make(sig.core.with_params(names))
            if not args.check:
                sig = sig.vmap(in_axes, out_axes, axis_size=args.axis_size, axis_name=args.axis_name)
        except AxisCheckError as err:
            raise UsageError(str(err).splitlines()[0]) from None
    except UsageError as err:
        print(f"axischeck: error: {err} (see axischeck --help)", file=sys.stderr)
        return 2
    try:
        pred = sig.predict(*shapes)
    except AxisCheckError as err:
        print(f"{type(err).__name__}: {err}")
        return 1
    print(f"predicted: {_shapes_text(pred.shapes)}")
    print(f"batched signature: {sig}")
    print(render_steps(pred.steps))
    return 0


def main() -> None:
    sys.exit(run())
