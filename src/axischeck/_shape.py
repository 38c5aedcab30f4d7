"""`Shape`: a tuple of ints that JAX treats as a pytree leaf."""

from __future__ import annotations

from typing import SupportsIndex


class Shape(tuple[int, ...]):
    """A concrete array shape.

    A `tuple` subclass, so `Shape((16, 8)) == (16, 8)`. Plain tuple subclasses are
    leaves for `jax.tree_util` (only namedtuples are containers), so a pytree of
    `Shape`s keeps the structure of the value it describes.

    ```python
    >>> Shape((16, 8, 2))
    Shape(16, 8, 2)
    >>> Shape((16, 8, 2)) == (16, 8, 2)
    True
    ```
    """

    __slots__ = ()

    def __new__(cls, dims: tuple[int, ...] | list[int] = ()) -> Shape:
        return super().__new__(cls, (int(d) for d in dims))

    @property
    def rank(self) -> int:
        return len(self)

    def delete(self, axis: SupportsIndex) -> Shape:
        """This shape without `axis` (already canonical)."""
        i = int(axis)
        return Shape(self[:i] + self[i + 1 :])

    def insert(self, axis: SupportsIndex, size: int) -> Shape:
        """This shape with `size` inserted at `axis` (already canonical)."""
        i = int(axis)
        return Shape(self[:i] + (size,) + self[i:])

    def __repr__(self) -> str:
        return "Shape(" + ", ".join(str(d) for d in self) + ")"

    def __str__(self) -> str:
        return format_shape(self)


def format_shape(dims: tuple[int, ...]) -> str:
    """`(16, 8, 2)`, `(3,)` or `()`, as Python prints a tuple of ints."""
    if len(dims) == 1:
        return f"({dims[0]},)"
    return "(" + ", ".join(str(d) for d in dims) + ")"
