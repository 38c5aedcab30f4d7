"""The `axischeck` command: predict and explain vmap and shard_map shapes without writing code.

    axischeck predict "(a,b),(b,c),(a,c)->(a,c)" --in-axes "(0,1,0)" 16x8x4 4x16x2 16x8x2
    axischeck explain "(a,b),(b,c),(a,c)->(a,c)" --in-axes "(0,1,0)" 16x8x4 5x16x2 16x8x2
    axischeck shard "(n,k),(k,m)->(n,m)" 1024x16 16x8 --mesh data=64 \
        --in-specs "[('data',), None]" --out-specs "('data',)"
    axischeck demo

Axes are read with `ast.literal_eval` and signatures by axischeck's own parser; nothing
is evaluated. Exit status: 0 when the shapes agree, 1 when they do not (the explanation
is printed), 2 for malformed input.
"""

from __future__ import annotations

import argparse
import ast
import inspect
import re
import sys
from collections.abc import Callable, Sequence
from typing import Any, NoReturn, TypeVar

from ._errors import AxisCheckError
from ._explain import render_steps
from ._prediction import Prediction
from ._signature import Signature
from ._transform import _shapes_text

P = TypeVar("P", bound=Prediction)


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
    parser = _Parser(
        prog="axischeck", description="Predict and explain JAX vmap and shard_map shapes from a signature."
    )
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
        p.add_argument("--axis-size", type=int, default=None, help="vmap axis_size")
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
    sub.add_parser("demo", help="walk through the seed article's examples")
    # Shapes may follow the options (argparse stops a '*' positional at the first option).
    args, extra = parser.parse_known_args(argv)
    if extra and args.command in ("predict", "explain", "shard"):
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
        if args.command == "shard":
            return _shard(args, shapes)
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
    return _report(
        lambda: sig.predict(*shapes),
        lambda pred: [f"predicted: {_shapes_text(pred.shapes)}", f"batched signature: {sig}", render_steps(pred.steps)],
    )


def _report(predict: Callable[[], P], lines: Callable[[P], list[str]]) -> int:
    """Print the prediction (exit 0), or the explanation of why there is none (exit 1)."""
    try:
        pred = predict()
    except AxisCheckError as err:
        print(f"{type(err).__name__}: {err}")
        return 1
    print("\n".join(lines(pred)))
    return 0


def parse_mesh(text: str) -> dict[str, int]:
    """`data=64,model=8` -> {"data": 64, "model": 8}."""
    mesh: dict[str, int] = {}
    for part in (p.strip() for p in text.split(",") if p.strip()):
        name, _, size = part.partition("=")
        if not name.strip().isidentifier() or not size.strip().isdigit() or int(size) < 1 or name.strip() in mesh:
            raise UsageError(f"bad --mesh {text!r}: write axis=size pairs, like data=64,model=8")
        mesh[name.strip()] = int(size)
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
        raise UsageError(f"bad {what} entry {value!r}: write a tuple of axis names, None or tuples, like ('x', None)")
    return PartitionSpec(*entries)  # type: ignore[no-untyped-call]


def parse_specs(text: str, what: str) -> Any:
    """One spec for every argument (a tuple), or a list of one per argument."""
    value = parse_axes(text, what)
    if isinstance(value, list):
        return tuple(_spec(v, what) for v in value)
    return _spec(value, what)


def _shard(args: argparse.Namespace, shapes: list[tuple[int, ...]]) -> int:
    """`axischeck shard`: shard_map shapes from a per-device signature; no function runs."""
    from ._shard_map import shard_map

    mesh = parse_mesh(args.mesh)
    in_specs = parse_specs(args.in_specs, "--in-specs")
    out_specs = parse_specs(args.out_specs, "--out-specs")  # a list: one per output
    axis_names = frozenset(n.strip() for n in args.axis_names.split(",")) if args.axis_names else frozenset()
    names = [n.strip() for n in args.names.split(",")] if args.names else [f"x{i}" for i in range(len(shapes))]
    if len(names) != len(shapes) or not all(n.isidentifier() for n in names):
        raise UsageError(f"--names needs {len(shapes)} comma-separated identifiers, got {args.names!r}")

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
            f"predicted: {_shapes_text(pred.shapes)}; per device: {_shapes_text(pred.block_shapes)}",
            str(pred),
        ],
    )


def main() -> None:
    sys.exit(run())
