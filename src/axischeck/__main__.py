"""`python -m axischeck demo`: the command-line entry point."""

from __future__ import annotations

import argparse
import sys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="axischeck", description="Predict and explain JAX vmap axes.")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("demo", help="walk through the seed article's examples")
    args = parser.parse_args(argv)
    if args.command == "demo":
        from ._demo import main as demo

        return demo()
    parser.error(f"unknown command {args.command!r}")
    return 2


if __name__ == "__main__":
    sys.exit(main())
