"""`axischeck lsp`: lint's findings, shapes and fixes in the editor, over the Language Server Protocol.

    axischeck lsp          # or: python -m axischeck lsp   (stdio; needs the extra axischeck[lsp])

The server reads files as lint does, with `ast` only: it never imports or runs them. It
publishes lint's findings as diagnostics (on open, on change after a short pause, on save),
answers hover on a transform, the function it returns and a call of it with the shapes
lint knows (`axischeck._lint._query`), offers each fix lint is sure of as a quick fix, and
shows a mapped call's predicted shape as an inlay hint. docs/editors.md sets it up.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

__all__ = ["main"]

MISSING = (
    "axischeck lsp needs pygls, which is not installed here: pip install 'axischeck[lsp]'"
    " (from a checkout: pip install '.[lsp]')"
)


def main(argv: Sequence[str] = ()) -> int:
    """Serve over stdin/stdout until the client says exit or goes away; 2 without pygls."""
    try:
        import pygls  # noqa: F401
    except ImportError:
        print(f"axischeck: error: {MISSING}", file=sys.stderr)
        return 2
    from ._server import serve

    return serve(argv)
