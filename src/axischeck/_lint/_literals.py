"""Reading option values from source text: literals only, anything else stays unknown."""

from __future__ import annotations

import ast
from typing import Any


class Unknown:
    """A value the linter cannot know without running the code."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<unknown>"


UNKNOWN: Any = Unknown()


def literal(node: ast.expr | None, depth: int = 0) -> Any:
    """`node` as a Python value: constants (with a unary minus), tuples, lists and dicts of
    them; a part that is not a literal (a name, a call) is `UNKNOWN`."""
    if node is None:
        return UNKNOWN
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        inner = literal(node.operand, depth)
        if type(inner) in (int, float, complex):
            return -inner if isinstance(node.op, ast.USub) else +inner
        return UNKNOWN
    if depth > 50:
        return UNKNOWN
    if isinstance(node, ast.Tuple):
        if any(isinstance(e, ast.Starred) for e in node.elts):
            return UNKNOWN
        return tuple(literal(e, depth + 1) for e in node.elts)
    if isinstance(node, ast.List):
        if any(isinstance(e, ast.Starred) for e in node.elts):
            return UNKNOWN
        return [literal(e, depth + 1) for e in node.elts]
    if isinstance(node, ast.Dict):
        if any(k is None for k in node.keys):  # {**other}
            return UNKNOWN
        keys = [literal(k, depth + 1) for k in node.keys]
        if any(k is UNKNOWN for k in keys):
            return UNKNOWN
        try:
            return {k: literal(v, depth + 1) for k, v in zip(keys, node.values, strict=True)}
        except TypeError:  # an unhashable key
            return UNKNOWN
    return UNKNOWN


def axis_leaves(value: Any) -> list[Any]:
    """Every leaf of an axes value (None counts as a leaf, as in JAX's axes trees)."""
    if isinstance(value, (tuple, list)):
        return [leaf for v in value for leaf in axis_leaves(v)]
    if isinstance(value, dict):
        return [leaf for v in value.values() for leaf in axis_leaves(v)]
    return [value]


def bad_axis(value: Any) -> bool:
    """A leaf JAX refuses as an axis: anything but an exact int or None (bool too)."""
    return value is not UNKNOWN and not (value is None or type(value) is int)


def axes_text(value: Any) -> str:
    """The value as the user would write it."""
    if value is UNKNOWN:
        return "..."
    if isinstance(value, tuple):
        inner = ", ".join(axes_text(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, list):
        return "[" + ", ".join(axes_text(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k!r}: {axes_text(v)}" for k, v in value.items()) + "}"
    return repr(value)
