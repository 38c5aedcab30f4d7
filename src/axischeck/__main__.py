"""`python -m axischeck`: the same as the `axischeck` command."""

import sys

# `python -m` puts the working directory first on sys.path, so a `tomllib.py` or `ast.py`
# in the linted project would be imported (and run) in place of the standard library's.
# `lint` and `lsp` read that folder's files as text only: they drop the entry, as pylint does. Other
# commands (`run`, `infer`) import the user's modules from there on purpose.
if __name__ == "__main__" and sys.argv[1:2] in (["lint"], ["lsp"]):
    import os

    _cwd = os.getcwd()
    sys.path[:] = [p for p in sys.path if p not in ("", ".", _cwd)]

from ._cli import main, run  # noqa: E402

__all__ = ["main", "run"]

if __name__ == "__main__":
    sys.exit(main())
