"""Unification: match per-example shapes to array specs, binding every symbol.

The result is either `Bindings` or a `Conflict` (never an exception), so callers
decide how to report and a search (fix suggestions) can try alternatives cheaply.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from .._core._dims import Anonymous, ArraySpec, Fixed, Named, Variadic
from .._core._errors import Place, Size
from .._core._shape import Shape

PlaceFn = Callable[[int | None, Size], Place]
"""Names an axis of the array being unified: (per-example axis or None, size) -> Place."""


@dataclass(frozen=True, slots=True)
class Bindings:
    """The size of every bound symbol, and the place that first bound it.

    ```python
    >>> bindings = ax.Signature("(a,b),(b,c)->(a,c)").unify((8, 4), (4, 2))
    >>> str(bindings), bindings.places["b"].describe()
    ('a=8  b=4  c=2', 'axis 1 of args[0] (size 4)')
    ```
    """

    sizes: Mapping[str, Size] = field(default_factory=dict)
    places: Mapping[str, Place] = field(default_factory=dict)

    def __str__(self) -> str:
        return "  ".join(f"{k}={_fmt(v)}" for k, v in self.sizes.items())


@dataclass(frozen=True, slots=True)
class Conflict:
    """Why a shape does not match its spec: a sentence, the symbol, the places.

    ```python
    >>> conflict = ax.Signature("(a,b),(b,c)->(a,c)").unify((8, 4), (5, 2))
    >>> conflict.symbol, conflict.problem
    ('b', "dimension 'b' disagrees: 4 from args[0], 5 from args[1]")
    ```
    """

    problem: str
    symbol: str | None
    places: tuple[Place, ...]


def _fmt(size: Size) -> str:
    if isinstance(size, tuple):
        return "(" + ", ".join(map(str, size)) + ("," if len(size) == 1 else "") + ")"
    return str(size)


@dataclass(slots=True)
class Unifier:
    """Accumulates bindings over many (spec, shape) pairs, in argument order."""

    sizes: dict[str, Size] = field(default_factory=dict)
    places: dict[str, Place] = field(default_factory=dict)
    unit: str = "per-example"  # what the signature describes ("per-device" under shard_map/pmap)

    def bind_axis_name(self, name: str, size: int, place: Place) -> None:
        """Pre-bind a mapped axis name: in a signature it stands for that axis' size."""
        self.sizes[name] = size
        self.places[name] = place

    def bindings(self) -> Bindings:
        return Bindings(dict(self.sizes), dict(self.places))

    def unify(
        self,
        spec: ArraySpec,
        shape: Shape,
        place_of: PlaceFn,
        what: str,
    ) -> Conflict | None:
        """Match `shape` against `spec`; `place_of(axis, size)` names an axis for messages
        (called only for a place that is kept: a new binding or a conflict)."""
        dims = spec.dims
        v = spec.variadic_index
        rank = len(shape)
        if (v is None and rank != len(dims)) or (v is not None and rank < len(dims) - 1):
            need = f"{len(dims)}" if v is None else f"at least {len(dims) - 1}"
            return Conflict(
                f"{what} has {self.unit} shape {_fmt(shape)} of rank {rank}, but its signature"
                f" {spec} needs rank {need}",
                None,
                (place_of(None, shape),),
            )
        found: Conflict | None = None  # the first one; later dims still bind
        if v is not None:
            var = dims[v]
            assert isinstance(var, Variadic)
            if var.name is not None:
                run = tuple(shape[v : rank - len(dims) + v + 1])
                found = self._bind(var.name, run, place_of, v, what)
        for j, dim in enumerate(dims):
            if v is not None and j >= v:
                if j == v:
                    continue
                axis = rank - len(dims) + j  # after the variadic run: counted from the end
            else:
                axis = j
            if isinstance(dim, Anonymous):
                continue
            size = shape[axis]
            if isinstance(dim, Fixed):
                if size != dim.size and found is None:
                    found = Conflict(
                        f"axis {axis} of {what} has size {size}, but the signature {spec} fixes it to {dim.size}",
                        str(dim.size),
                        (place_of(axis, size),),
                    )
                continue
            assert isinstance(dim, Named)
            if dim.broadcast and size == 1:
                continue
            conflict = self._bind(dim.name, size, place_of, axis, what)
            found = found or conflict
        return found

    def _bind(self, name: str, size: Size, place_of: PlaceFn, axis: int | None, what: str) -> Conflict | None:
        bound = self.sizes.get(name)
        if bound is None:
            self.sizes[name] = size
            self.places[name] = place_of(axis, size)
            return None
        if bound == size:
            return None
        first = self.places[name]
        return Conflict(
            f"dimension '{name}' disagrees: {_fmt(bound)} from {first.arg}, {_fmt(size)} from {what}",
            name,
            (first, place_of(axis, size)),
        )


def resolve(spec: ArraySpec, sizes: Mapping[str, Size]) -> Shape | None:
    """The concrete shape `spec` names under `sizes`, or None if a dim is unknown."""
    out: list[int] = []
    for dim in spec.dims:
        if isinstance(dim, Fixed):
            out.append(dim.size)
        elif isinstance(dim, Named):
            size = sizes.get(dim.name, 1 if dim.broadcast else None)
            if not isinstance(size, int):
                return None
            out.append(size)
        elif isinstance(dim, Variadic) and dim.name is not None:
            run = sizes.get(dim.name)
            if not isinstance(run, tuple):
                return None
            out.extend(run)
        else:
            return None
    return Shape(out)


def unbound_symbols(spec: ArraySpec, sizes: Mapping[str, Size]) -> list[str]:
    """The dims of `spec` that `resolve` cannot size, as written."""
    missing = []
    for dim in spec.dims:
        if isinstance(dim, (Anonymous,)) or (isinstance(dim, Variadic) and dim.name is None):
            missing.append(str(dim))
        elif (
            isinstance(dim, (Named, Variadic))
            and dim.name not in sizes
            and not (isinstance(dim, Named) and dim.broadcast)
        ):
            missing.append(str(dim))
    return missing
