"""The runtime engine's signature and annotation parsers, imported at their first use.

Lint and runtime read `signature=` and `Annotated[Array, "a b"]` with one parser, so they
agree on what a declaration means. Annotations are read from the syntax tree without JAX
(`_core._annotation_text`); the dims found are put in pytrees with JAX's `tree_util`, so
JAX is imported only when a file declares dims: `axischeck lint` on code without them
(annotated `Optional[float]`, `list[int]`, ... or not at all) starts and runs without it.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .._core._spec import SigCore

Ranks = tuple[int | None, ...]  # the ranks of a value's array leaves (None: not fixed)


def annotation_ranks(annotation: ast.expr, where: str) -> tuple[Ranks | None, bool]:
    """Leaf ranks an annotation declares, and whether it declares a tuple; (None, False)
    when it declares none or cannot be read."""
    from .._core._annotation_text import NOTHING, dims_of_node
    from .._core._errors import AxisCheckError

    try:
        dims = dims_of_node(annotation, where)
        if dims is NOTHING:
            return None, False
        from .._core._spec import spec_tree  # dims declared: JAX's tree_util puts them in a pytree

        tree = spec_tree(dims, where)
    except (AxisCheckError, RecursionError, ValueError, TypeError):
        return None, False
    return tuple(s.min_rank if s.variadic_index is None else None for s in tree.leaves), isinstance(dims, tuple)


class SignatureError(Exception):
    """`signature=` text the runtime parser refuses; the message is the parser's first line."""


def parse_signature(value: Any) -> SigCore | None:
    """The parsed `signature=` literal; None for a value the parser was never meant to see.

    Raises `SignatureError` where axischeck raises SpecError when the transform is built.
    """
    from .._core._errors import AxisCheckError
    from .._core._spec import core_from_value

    try:
        return core_from_value(value)
    except AxisCheckError as err:
        raise SignatureError(str(err).splitlines()[0]) from None
    except Exception:  # a literal the parser was never meant to see: leave it to the runtime
        return None
