"""`Shape`: a tuple of ints that JAX treats as a pytree leaf."""

from __future__ import annotations

from typing import Any, SupportsIndex

import numpy as np

from ._errors import SpecError
from ._text import format_shape, short_repr


class Shape(tuple[int, ...]):
    """A concrete array shape.

    A `tuple` subclass, so `Shape((16, 8)) == (16, 8)`. Plain tuple subclasses are
    leaves for `jax.tree_util` (only namedtuples are containers), so a pytree of
    `Shape`s keeps the structure of the value it describes.

    ```python
    >>> s = ax.Shape((16, 8, 2))
    >>> s
    Shape(16, 8, 2)
    >>> s == (16, 8, 2), s.rank, str(s)
    (True, 3, '(16, 8, 2)')
    >>> jax.tree_util.tree_leaves({"W": ax.Shape((4, 3)), "b": ax.Shape((4,))})
    [Shape(4, 3), Shape(4)]
    ```
    """

    __slots__ = ()

    def __new__(cls, dims: tuple[int, ...] | list[int] = ()) -> Shape:
        # Sizes are checked as `jax.ShapeDtypeStruct` checks them: ints >= 0 (NumPy
        # integers become ints); bools, floats and strings are refused. The common case,
        # a tuple of Python ints, costs one pass of type checks. (The fast path in
        # `_fastpath.py` builds Shapes of known-good ints with `tuple.__new__` instead.)
        if isinstance(dims, str):
            raise _bad_sequence(dims)
        try:
            items = tuple(dims)
        except TypeError:
            raise _bad_sequence(dims) from None
        for d in items:
            if type(d) is not int or d < 0:
                return super().__new__(cls, _checked(items))
        return super().__new__(cls, items)

    @property
    def rank(self) -> int:
        return len(self)

    def delete(self, axis: SupportsIndex) -> Shape:
        """This shape without `axis` (already canonical).

        ```python
        >>> ax.Shape((16, 8, 2)).delete(0)
        Shape(8, 2)
        ```
        """
        i = int(axis)
        return Shape(self[:i] + self[i + 1 :])

    def insert(self, axis: SupportsIndex, size: int) -> Shape:
        """This shape with `size` inserted at `axis` (already canonical).

        ```python
        >>> ax.Shape((8, 2)).insert(1, 16)
        Shape(8, 16, 2)
        ```
        """
        i = int(axis)
        return Shape(self[:i] + (size,) + self[i:])

    def __repr__(self) -> str:
        return "Shape(" + ", ".join(str(d) for d in self) + ")"

    def __str__(self) -> str:
        return format_shape(self)


def _checked(items: tuple[Any, ...]) -> tuple[int, ...]:
    out = []
    for i, d in enumerate(items):
        if isinstance(d, (bool, np.bool_)) or not isinstance(d, (int, np.integer)) or d < 0:
            raise SpecError(
                f"Shape sizes must be ints >= 0, got {_short(d)} (of type {type(d).__name__}) at position {i}"
            )
        out.append(int(d))
    return tuple(out)


def _bad_sequence(dims: object) -> Exception:
    return SpecError(
        f"Shape takes a sequence of sizes like (16, 8), got {_short(dims)} (of type {type(dims).__name__})"
    )


def _short(value: object) -> str:
    return short_repr(value)
