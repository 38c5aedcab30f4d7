"""Values written into messages: bounded in length, and never failing on the value they report."""

from __future__ import annotations

import reprlib
from collections.abc import Sequence
from typing import Any


def short_repr(value: Any) -> str:
    """A repr bounded in length, for values echoed in messages."""
    r = _ShortRepr()
    r.maxstring, r.maxother, r.maxlist, r.maxtuple, r.maxdict, r.maxlevel = 60, 60, 8, 8, 8, 4
    return r.repr(value)


def int_text(n: int) -> str:
    """`str(n)`, or how long it is for an int past Python's conversion limit
    (`sys.get_int_max_str_digits()`, 4300 digits by default), where `str` raises
    ValueError: a message must never fail on the value it reports."""
    try:
        return str(n)
    except ValueError:
        digits = round(abs(n).bit_length() * 0.30103)  # log10(2)
        return f"<{'-' if n < 0 else ''}int of about {digits} digits>"


def and_list(items: Sequence[str]) -> str:
    """`a`, `a and b`, `a, b and c`: names listed in a sentence."""
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


class _ShortRepr(reprlib.Repr):
    def repr_int(self, x: int, level: int) -> str:
        text = int_text(x)
        if len(text) > self.maxlong:
            keep = max(0, (self.maxlong - 3) // 2)
            text = text[:keep] + "..." + text[len(text) - keep :]
        return text


def format_shape(dims: tuple[int, ...]) -> str:
    """`(16, 8, 2)`, `(3,)` or `()`, as Python prints a tuple of ints."""
    if len(dims) == 1:
        return f"({int_text(dims[0])},)"
    return "(" + ", ".join(map(int_text, dims)) + ")"
