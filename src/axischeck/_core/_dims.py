"""Dimensions and per-array shape specs, and the text grammar that spells them.

Grammar (one array): dimensions separated by spaces or commas, optionally wrapped
in parentheses.

- `a`, `batch`, `n_heads`: a named size; the same name must mean the same size.
- `3`: a fixed size.
- `_` (or any name starting with `_`): any size, not bound.
- `#a`: named, but size 1 also matches (jaxtyping's broadcastable dimension).
- `*batch`: any number of axes, bound as a tuple; `...` or `*_`: any number, unbound.

A whole signature joins arrays with commas and outputs with `->`: the NumPy gufunc
form `"(a,b),(b,c)->(a,c)"` or the space form `"a b, b c -> a c"`.

Names are Python identifiers (`α` is a name, `²` is not); sizes are ASCII digits only
(`٣` and `３` are refused rather than read as 3) and fit in an int64, as JAX sizes do.
Spec text is at most `MAX_SPEC_CHARS` long, and parsing is linear in its length.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ._errors import SpecError
from ._text import short_repr

MAX_SPEC_CHARS = 100_000
"""The longest signature or dim string accepted (real ones are a few hundred characters)."""

MAX_SIZE = 2**63 - 1  # the largest size JAX can hold (int64)


def quote(text: str) -> str:
    """`repr(text)`, shortened in the middle when long, for error messages."""
    if len(text) <= 120:
        return repr(text)
    return f"{text[:50]!r}...{text[-30:]!r} ({len(text)} characters)"


def as_spec_text(text: Any, what: str) -> str:
    """`text` as an exact `str` (a subclass's own `__repr__`/`__hash__` never run), or SpecError."""
    if not isinstance(text, str):
        raise SpecError(f"{what} must be a string, got {type(text).__name__}: {short_repr(text)}")
    exact: str = str.__str__(text)  # an exact str copy of a str subclass
    if len(exact) > MAX_SPEC_CHARS:
        raise SpecError(
            f"{what} starting {exact[:50]!r} is {len(exact)} characters long; the limit is {MAX_SPEC_CHARS} characters"
        )
    return exact


def is_size(text: str) -> bool:
    """Whether `text` spells a fixed size: ASCII digits only (`str.isdigit` also takes `²`, `٣`)."""
    return bool(_INT.match(text))


def parse_size(text: str, token: str, where: str) -> int:
    """The int that `text` (ASCII digits, see `is_size`) spells, if JAX could hold it."""
    # Checked by length first: int() refuses more than 4300 digits with a ValueError.
    if len(text.lstrip("0")) > len(str(MAX_SIZE)) or int(text) > MAX_SIZE:
        raise SpecError(f"fixed size {quote(token)} in {where} is too large: JAX sizes are at most {MAX_SIZE} (int64)")
    return int(text)


@dataclass(frozen=True, slots=True)
class Named:
    """A size bound by name: equal names are equal sizes."""

    name: str
    broadcast: bool = False

    def __str__(self) -> str:
        return ("#" if self.broadcast else "") + self.name


@dataclass(frozen=True, slots=True)
class Fixed:
    """A size written as an integer."""

    size: int

    def __str__(self) -> str:
        return str(self.size)


@dataclass(frozen=True, slots=True)
class Anonymous:
    """One axis of any size, not bound (`_`)."""

    def __str__(self) -> str:
        return "_"


@dataclass(frozen=True, slots=True)
class Variadic:
    """Any number of axes; bound as a tuple when named (`*batch`), free otherwise (`...`)."""

    name: str | None = None

    def __str__(self) -> str:
        return "..." if self.name is None else "*" + self.name


Dim = Named | Fixed | Anonymous | Variadic


@dataclass(frozen=True, slots=True)
class ArraySpec:
    """The per-example shape of one array: a tuple of `Dim`s, at most one variadic."""

    dims: tuple[Dim, ...]
    # Its text, made at the first `str`: a tree of 16,000 leaves shares one spec among
    # them, and each error about it writes the whole tree.
    _text: str | None = field(default=None, init=False, repr=False, compare=False)

    @property
    def variadic_index(self) -> int | None:
        for i, d in enumerate(self.dims):
            if isinstance(d, Variadic):
                return i
        return None

    @property
    def min_rank(self) -> int:
        return len(self.dims) - (self.variadic_index is not None)

    @property
    def symbols(self) -> frozenset[str]:
        return frozenset(d.name for d in self.dims if isinstance(d, (Named, Variadic)) and d.name is not None)

    def __str__(self) -> str:
        text = self._text
        if text is None:
            text = "(" + ", ".join(str(d) for d in self.dims) + ")"
            object.__setattr__(self, "_text", text)  # the same text each time: frozen in effect
        return text


ANY = ArraySpec((Variadic(None),))
"""Matches any shape, and any non-array leaf: an unchecked argument."""

_INT = re.compile(r"[0-9]+\Z")


def _parse_dim(token: str, where: str) -> Dim:
    if token in ("...", "*_"):
        return Variadic(None)
    if token.startswith("*"):
        body = token[1:]
        if body.startswith("#") or body.endswith("#"):
            raise SpecError(
                f"broadcastable variadic dimension {quote(token)} in {where} is not supported;"
                " use '*name' (exact) or '...' (unchecked)"
            )
        if not body.isidentifier():
            raise SpecError(f"bad variadic dimension {quote(token)} in {where}: expected '*name' or '...'")
        return Variadic(None if body.startswith("_") else body)
    broadcast = token.startswith("#")
    body = token[1:] if broadcast else token
    if is_size(body):
        if broadcast:
            raise SpecError(f"'#' needs a name, not a number, in {quote(token)} in {where}")
        return Fixed(parse_size(body, token, where))
    if body.isidentifier():
        if body.startswith("_"):
            return Anonymous()
        return Named(body, broadcast)
    raise SpecError(
        f"bad dimension {quote(token)} in {where}: expected a name, an integer (ASCII digits),"
        " '_', '#name', '*name' or '...'"
    )


def parse_array_spec(text: str) -> ArraySpec:
    """Parse one array's dims: `"a b"`, `"(a, b)"`, `"*batch c"`, `""` (a scalar)."""
    text = as_spec_text(text, "a shape spec")
    where = quote(text)
    body = text.strip()
    if body.startswith("(") or body.endswith(")"):
        if not (body.startswith("(") and body.endswith(")")) or "(" in body[1:-1] or ")" in body[1:-1]:
            raise SpecError(f"unbalanced parentheses in shape spec {where}")
        body = body[1:-1]
    tokens = [t for t in re.split(r"[\s,]+", body) if t]
    dims = tuple(_parse_dim(t, where) for t in tokens)
    if sum(isinstance(d, Variadic) for d in dims) > 1:
        raise SpecError(f"shape spec {where} has more than one variadic dimension ('*name' or '...')")
    return ArraySpec(dims)


_GUFUNC_ARG = re.compile(r"\s*\(([^()]*)\)\s*")


def _check_balanced(body: str, whole: str) -> None:
    depth = 0
    for i, ch in enumerate(body):
        depth += (ch == "(") - (ch == ")")
        if depth not in (0, 1):
            problem = "a ')' without '('" if depth < 0 else "nested '(' (gufunc groups do not nest)"
            raise SpecError(f"unbalanced parentheses in signature {quote(whole)}: {problem} at position {i}")
    if depth:
        raise SpecError(f"unbalanced parentheses in signature {quote(whole)}: a '(' is never closed")


def _parse_arg_list(text: str, whole: str) -> tuple[ArraySpec, ...]:
    """Comma-joined arrays: gufunc `(a,b),(b,c)` or space form `a b, b c`."""
    body = text.strip()
    if not body:
        return ()
    if "(" in body or ")" in body:
        _check_balanced(body, whole)
        specs = []
        pos = 0
        while True:
            m = _GUFUNC_ARG.match(body, pos)
            if m is None:
                raise SpecError(
                    f"cannot parse signature {quote(whole)} near {quote(body[pos : pos + 200])}:"
                    " expected '(dims)' groups joined by commas, like '(a,b),(b,c)->(a,c)'"
                )
            specs.append(parse_array_spec("(" + m.group(1) + ")"))
            pos = m.end()
            if pos == len(body):
                return tuple(specs)
            if body[pos] != ",":
                raise SpecError(
                    f"cannot parse signature {quote(whole)}: expected ',' at {quote(body[pos : pos + 200])}"
                )
            pos += 1
    return tuple(parse_array_spec(part) for part in body.split(","))


def parse_signature_text(
    text: str,
) -> tuple[tuple[ArraySpec, ...], tuple[ArraySpec, ...] | None]:
    """Split a whole signature into input specs and output specs (None: no `->`)."""
    text = as_spec_text(text, "a signature")
    if text.count("->") > 1:
        raise SpecError(f"signature {quote(text)} has more than one '->'")
    if "->" in text:
        left, right = text.split("->")
        outputs = _parse_arg_list(right, text)
        if not outputs:
            raise SpecError(f"signature {quote(text)} declares no output after '->'; write '->()' for a scalar")
        return _parse_arg_list(left, text), outputs
    return _parse_arg_list(text, text), None
