"""`python -m axischeck`: the same as the `axischeck` command."""

from __future__ import annotations

import sys

from ._cli import main, run

__all__ = ["main", "run"]

if __name__ == "__main__":
    sys.exit(main())
