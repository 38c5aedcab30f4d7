"""Dims written in annotation source, read with `ast` and never evaluated.

`Annotated[X, "a b"]` (literal metadata only), jaxtyping's `Float[Array, "a b"]`,
`PyTree[Float[Array, "n"]]` and `tuple[...]` of those, from a syntax tree or from an
annotation kept as text (PEP 563). The runtime reads annotations it cannot resolve with
these functions and `axischeck lint` reads every annotation with them: they need neither
JAX nor the annotated code, so lint imports JAX only for a file that declares dims.
"""

from __future__ import annotations

import ast
from typing import Any

from ._dims import Anonymous, ArraySpec, Dim, Fixed, Named, Variadic, is_size, parse_size, quote
from ._errors import SpecError

NOTHING = object()


JAXTYPING_NAMES = frozenset(
    "Shaped Float Int Integer UInt Bool Complex Inexact Num Real Key Float16 Float32 Float64"
    " BFloat16 Int8 Int16 Int32 Int64 UInt8 UInt16 UInt32 UInt64 Complex64 Complex128".split()
)


def dims_of_text(text: str, where: str, output: bool = False) -> Any:
    """Dims from an annotation we could not resolve (a string under PEP 563).

    Parsed with `ast`, never evaluated: `Annotated[X, "a b"]`, `Annotated[X, {...}]`
    (literals only), jaxtyping's `Float[Array, "a b"]`, and `tuple[...]` of those.
    """
    try:
        node = ast.parse(text, mode="eval").body
    except (SyntaxError, ValueError, MemoryError, RecursionError):  # ValueError: a NUL byte
        return NOTHING
    if isinstance(node, ast.Constant) and isinstance(node.value, str):  # quoted under PEP 563 too
        return dims_of_text(node.value, where, output)
    return dims_of_node(node, where, output)


def _name_of(node: ast.expr) -> str:
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else ""


def dims_of_node(node: ast.expr, where: str, output: bool = False) -> Any:
    """The dims an annotation's syntax declares, or NOTHING; an `output`'s `PyTree[...]`
    declares nothing (its structure is the trace's to say)."""
    if not isinstance(node, ast.Subscript):
        return NOTHING
    name = _name_of(node.value)
    parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
    if name == "Annotated":
        for meta in parts[1:]:
            try:
                value = ast.literal_eval(meta)
            except Exception:  # not a literal, or one that cannot be built ({[1]: 'a'})
                continue
            if isinstance(value, (str, dict, list, tuple)):
                return value
        return NOTHING
    if name in JAXTYPING_NAMES and len(parts) == 2 and isinstance(parts[1], ast.Constant):
        if isinstance(parts[1].value, str):
            return jaxtyping_dims(parts[1].value, where)
    if name == "PyTree" and parts and not output:  # PyTree[Float[Array, "n"]] or PyTree[..., "T"]
        leaf = parts[0]
        if isinstance(leaf, ast.Subscript) and _name_of(leaf.value) in JAXTYPING_NAMES:
            inner = leaf.slice.elts if isinstance(leaf.slice, ast.Tuple) else [leaf.slice]
            if len(inner) == 2 and isinstance(inner[1], ast.Constant) and isinstance(inner[1].value, str):
                return jaxtyping_dims(inner[1].value, where, in_pytree=True)
    if (
        name in ("tuple", "Tuple")
        and parts
        and not (isinstance(parts[-1], ast.Constant) and parts[-1].value is Ellipsis)
    ):
        found = [dims_of_node(p, where, output) for p in parts]
        if any(f is not NOTHING for f in found):
            return tuple(None if f is NOTHING else f for f in found)
    return NOTHING


def jaxtyping_dims(dim_str: str, where: str, *, in_pytree: bool = False) -> ArraySpec:
    """Translate jaxtyping's dim grammar: our tokens, plus `rows=4` (documents a `4`),
    `?n` (inside `PyTree[...]` a size that may differ from leaf to leaf, so unchecked;
    elsewhere just `n`) and symbolic expressions, which axischeck does not evaluate."""
    dims = tuple(_jaxtyping_dim(tok, dim_str, where, in_pytree) for tok in dim_str.split())
    if sum(isinstance(d, Variadic) for d in dims) > 1:
        raise SpecError(f"jaxtyping dims {dim_str!r} of {where} have more than one variadic dimension")
    return ArraySpec(dims)


def _jaxtyping_dim(token: str, dim_str: str, where: str, in_pytree: bool) -> Dim:
    if token == "...":
        return Variadic(None)
    flags = ""
    body = token
    # jaxtyping strips the modifiers `#`, `*`, `_`, `?` and a `name=` prefix, in any order.
    while body:
        if body[0] in "#*_?":
            flags += body[0]
            body = body[1:]
        elif body.count("=") == 1:
            body = body.split("=")[1]
        else:
            break
    anonymous = "_" in flags or ("?" in flags and in_pytree)
    if is_size(body) and not flags:
        return Fixed(parse_size(body, token, f"{quote(dim_str)} of {where}"))
    if body and not body.isidentifier() and not is_size(body) and not _python_expression(body):
        raise Refused(
            f"jaxtyping dimension {quote(token)} (in {quote(dim_str)} of {where}) is not a dimension:"
            " neither a name, a size in ASCII digits, nor an expression jaxtyping could evaluate",
            hint="write a name (like 'n') or a size in ASCII digits (like '2')",
        )
    if is_size(body) or (body and not body.isidentifier()):
        raise SpecError(
            f"jaxtyping dimension {quote(token)} (in {quote(dim_str)} of {where}) is not one axischeck reads:"
            " it reads names, integers, 'name=4', '_', '#name', '*name', '?name' and '...',"
            " and evaluates no expressions",
            hint="pass signature=... to the decorator to declare these shapes for axischeck",
        )
    if "*" in flags:
        if "#" in flags:
            raise SpecError(
                f"jaxtyping dimension {token!r} (in {dim_str!r} of {where}) is a broadcastable run,"
                " which axischeck does not check",
                hint="pass signature=... to the decorator, with '*name' (exact) or '...' (unchecked)",
            )
        return Variadic(None if anonymous or not body else body)
    if anonymous or not body:
        return Anonymous()
    return Named(body, broadcast="#" in flags)


class Refused(SpecError):
    """Dims that no reader accepts, which `check_text_dims` refuses at decoration."""


def _python_expression(text: str) -> bool:
    try:
        ast.parse(text, mode="eval")
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return False
    return True
