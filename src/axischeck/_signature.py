"""`Signature`: the public value for a per-example shape signature and its algebra."""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

import jax
import numpy as np

from ._axes import freeze_in_axes, freeze_out_axes
from ._dims import ArraySpec, Named, Variadic, parse_signature_text
from ._errors import ArgumentError, SpecError
from ._leaves import flatten_call, label_call, shapes_as_structs
from ._levels import VmapLevel
from ._models import Model, SignatureModel, VmapModel, run
from ._prediction import Prediction
from ._spec import SigCore, SpecTree, core_from_value, spec_tree
from ._steps import MapStep
from ._trees import short_repr
from ._unify import Bindings, Conflict

_MISSING: Any = object()


def fresh_symbol(taken: frozenset[str] | set[str], axis_name: Hashable | None) -> str:
    """The batch symbol for a new level: the axis name if it is a str, else B, B2, ..."""
    if isinstance(axis_name, str):
        return axis_name
    n = 1
    while (name := "B" if n == 1 else f"B{n}") in taken:
        n += 1
    return name


def check_axis_size(axis_size: Any, transform: str = "vmap") -> int | None:
    """An int (or numpy integer scalar, which JAX accepts) >= 0, or None."""
    if axis_size is None:
        return None
    if isinstance(axis_size, bool) or not isinstance(axis_size, (int, np.integer)):
        raise SpecError(
            f"{transform} axis_size must be an int or None, got {short_repr(axis_size)}"
            f" of type {type(axis_size).__name__}"
        )
    size = int(axis_size)
    if size < 0:
        raise SpecError(f"{transform} axis_size must be >= 0, got {size}")
    return size


_LEAF = jax.tree_util.tree_structure(0)


def _batch_axis(spec: ArraySpec, over: str, what: str) -> int | None:
    """Where `over` sits in `spec`, counted so it stays right whatever a variadic holds."""
    hits = [i for i, d in enumerate(spec.dims) if isinstance(d, Named) and d.name == over]
    if not hits:
        return None
    if len(hits) > 1:
        raise SpecError(f"the batch dimension {over!r} appears {len(hits)} times in {what} {spec}")
    i = hits[0]
    v = spec.variadic_index
    return i if v is None or i < v else i - len(spec.dims)


def _without(spec: ArraySpec, over: str) -> ArraySpec:
    return ArraySpec(tuple(d for d in spec.dims if not (isinstance(d, Named) and d.name == over)))


def check_axis_name(axis_name: Any, what: str = "vmap axis_name") -> None:
    """Axis names must be hashable (JAX keys its axis environment by them), and not an int
    or a tuple: collectives read an int as a positional array axis and a tuple as several
    names (docs/jax-semantics.md#axis-names), so such a name silently means something else."""
    if isinstance(axis_name, (int, tuple)) and not isinstance(axis_name, bool):
        raise SpecError(
            f"{what} {axis_name!r} is an {type(axis_name).__name__}: collectives would read it as"
            f" {'a positional array axis' if isinstance(axis_name, int) else 'several axis names'}",
            fix="name the axis with a string, e.g. axis_name='batch'",
        )
    check_hashable(axis_name, what)


def check_hashable(value: Any, what: str) -> None:
    try:
        hash(value)
    except TypeError:
        raise SpecError(f"{what} must be hashable, got {short_repr(value)}") from None


def check_flag(value: Any, what: str) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise SpecError(f"{what} must be True or False, got {short_repr(value)}")
    return bool(value)


class Signature:
    """A per-example shape signature, as a value.

    Accepted forms:

    - a NumPy gufunc string: `Signature("(a,b),(b,c)->(a,c)")` (`()` is a scalar,
      integers are fixed sizes, `->(a),(b)` declares two outputs);
    - the space form: `Signature("n f, f o -> n")`, with `*batch`, `...`, `_`, `#a`;
    - pytrees of dim strings: `Signature(({"W": "o i", "b": "o"}, "i"), output="o")`;
    - a dict of parameter names: `Signature({"x": "a b", "return": "a"})`.

    `sig.vmap(in_axes, out_axes)` returns the batched signature, so nested vmaps are
    composition:

    ```python
    >>> s = ax.Signature("(a,b),(b,c),(a,c)->(a,c)").vmap(in_axes=(0, 1, 0))
    >>> str(s)
    '(B, a, b), (b, B, c), (B, a, c) -> (B, a, c)'
    >>> s.predict((16, 8, 4), (4, 16, 2), (16, 8, 2)).shapes
    Shape(16, 8, 2)
    ```
    """

    __slots__ = ("_core", "_levels")

    _core: SigCore
    _levels: tuple[VmapLevel, ...]

    def __init__(self, spec: Any, output: Any = _MISSING) -> None:
        if isinstance(spec, Signature):
            if output is not _MISSING:
                raise SpecError("give output= only with a tuple or dict of input specs")
            core, levels = spec._core, spec._levels
        else:
            core, levels = core_from_value(spec, output, has_output=output is not _MISSING), ()
        object.__setattr__(self, "_core", core)
        object.__setattr__(self, "_levels", levels)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("Signature is immutable")

    def __delattr__(self, name: str) -> None:
        raise AttributeError("Signature is immutable")

    # An immutable value: copies are the value itself; pickling rebuilds it from its
    # parts without going through `__setattr__` (which refuses every assignment).
    def __copy__(self) -> Signature:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> Signature:
        return self

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild, (self._core, self._levels))

    @classmethod
    def _make(cls, core: SigCore, levels: tuple[VmapLevel, ...] = ()) -> Signature:
        sig = cls.__new__(cls)
        object.__setattr__(sig, "_core", core)
        object.__setattr__(sig, "_levels", levels)
        return sig

    # ------------------------------------------------------------------ views

    @property
    def core(self) -> SigCore:
        """The per-example inputs and output, before any `vmap`."""
        return self._core

    @property
    def levels(self) -> tuple[VmapLevel, ...]:
        """The vmap levels applied so far, innermost first."""
        return self._levels

    @property
    def symbols(self) -> frozenset[str]:
        """Every dimension symbol, batch symbols included."""
        return self._core.symbols | {lvl.symbol for lvl in self._levels}

    @property
    def num_inputs(self) -> int:
        return len(self._core.inputs)

    # ---------------------------------------------------------------- algebra

    @classmethod
    def batched(cls, spec: str, over: str) -> Signature:
        """A signature of *batched* shapes, with the batch dimension named `over`.

        Where `over` sits in each input and output gives `in_axes` and `out_axes`, so the
        axes follow from the shapes you declare, even when sizes coincide (a checker that
        only compares sizes cannot tell `(n, b)` from `(b, n)` when n == b):

        ```python
        >>> s = ax.Signature.batched("(n,a,b),(b,n,c),(n,a,c)->(n,a,c)", over="n")
        >>> s.levels[0].in_axes.value, str(s.core)
        ((0, 1, 0), '(a, b), (b, c), (a, c) -> (a, c)')
        >>> def complex_operation(x, y, z):
        ...     return jnp.einsum("ab,bc->ac", x, y) + z
        >>> f = ax.vmap(complex_operation, signature=s)   # in_axes=(0, 1, 0) derived
        >>> f.in_axes
        (0, 1, 0)
        ```
        An input without `over` is unmapped (None); an output without it gets
        `out_axes=None`. `over` may appear at most once per array.
        """
        if not isinstance(over, str) or not over.isidentifier():
            raise SpecError(f"over= names the batch dimension, e.g. over='n'; got {short_repr(over)}")
        ins, outs = parse_signature_text(spec) if isinstance(spec, str) else (None, None)
        if ins is None:
            raise SpecError("Signature.batched takes a signature string like '(n,a,b),(b,n,c)->(n,a,c)'")
        in_axes = tuple(_batch_axis(s, over, f"input {i}") for i, s in enumerate(ins))
        out_list = [_batch_axis(s, over, f"output {i}") for i, s in enumerate(outs or ())]
        if over not in {d.name for s in ins for d in s.dims if isinstance(d, Named)}:
            raise SpecError(f"no input of {spec!r} has the batch dimension {over!r}")
        per_in = tuple(_without(s, over) for s in ins)
        core = SigCore(
            tuple(SpecTree(_LEAF, (s,)) for s in per_in),
            None
            if outs is None
            else spec_tree(
                _without(outs[0], over) if len(outs) == 1 else tuple(_without(s, over) for s in outs), "the output"
            ),
        )
        out_axes: Any = 0 if outs is None else (out_list[0] if len(out_list) == 1 else tuple(out_list))
        level = VmapLevel(freeze_in_axes(in_axes), freeze_out_axes(out_axes), fn_name="", symbol=over)
        return cls._make(core, (level,))

    def vmap(
        self,
        in_axes: Any = 0,
        out_axes: Any = 0,
        *,
        axis_size: int | None = None,
        axis_name: Hashable | None = None,
    ) -> Signature:
        """The signature of `jax.vmap(f, in_axes, out_axes, ...)` where `f` has this one.

        ```python
        >>> str(ax.Signature("(n),(n)->()").vmap(in_axes=(0, None)))
        '(B, n), (n) -> (B)'
        ```
        """
        check_axis_name(axis_name)
        level = VmapLevel(
            freeze_in_axes(in_axes),
            freeze_out_axes(out_axes),
            check_axis_size(axis_size),
            axis_name,
            fn_name="",
            symbol=fresh_symbol(self.symbols, axis_name)
            if not (isinstance(axis_name, str) and axis_name in {lvl.symbol for lvl in self._levels})
            else fresh_symbol(self.symbols, None),
        )
        return Signature._make(self._core, self._levels + (level,))

    def model(self, *, inputs_only: bool = False) -> Model:
        """The prediction model: the signature, wrapped by each vmap level."""
        model: Model = SignatureModel(self._core, inputs_only=inputs_only)
        for level in self._levels:
            model = VmapModel(level, model)
        return model

    def _call(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        flatten_call(args, kwargs)  # reports unflattenable arguments as ArgumentError
        args, kwargs = shapes_as_structs(args, kwargs)
        params = list(self._core.params or ())
        return label_call(tuple(args), kwargs, (params, None, set(params)) if params else None)

    # ------------------------------------------------------------- concrete use

    def predict(self, *args: Any, **kwargs: Any) -> Prediction:
        """Predict output shapes for concrete arguments (arrays, structs, shape tuples).

        ```python
        >>> ax.Signature("(a,b),(b,c)->(a,c)").predict((8, 4), (4, 2)).shapes
        Shape(8, 2)
        ```
        """
        outcome = run(self.model(), self._call(args, kwargs))
        maps = [s for s in outcome.steps if isinstance(s, MapStep)]
        return Prediction(outcome.shapes, maps[0].axis_size if maps else None, outcome.steps)

    def unify(self, *args: Any, **kwargs: Any) -> Bindings | Conflict:
        """Bind every symbol (batch symbols too) to concrete argument shapes.

        Returns `Bindings`, or the first `Conflict` (the symbol, the places that
        disagree with their sizes). Outputs are not considered.

        ```python
        >>> sig = ax.Signature("(a,b),(b,c)->(a,c)")
        >>> sig.unify((8, 4), (4, 2)).sizes
        {'a': 8, 'b': 4, 'c': 2}
        >>> sig.unify((8, 4), (5, 2)).symbol
        'b'
        ```
        """
        try:
            outcome = run(self.model(inputs_only=True), self._call(args, kwargs))
        except ArgumentError as err:
            return Conflict(err.problem, err.symbol, err.places)
        sizes: dict[str, int | tuple[int, ...]] = dict(outcome.bindings.sizes)
        places = dict(outcome.bindings.places)
        for step in outcome.steps:
            if isinstance(step, MapStep) and step.axis_size is not None:
                sizes[step.symbol] = step.axis_size
        return Bindings(sizes, places)

    # ---------------------------------------------------------------- display

    def __str__(self) -> str:
        return _render(self._core, self._levels)

    def __repr__(self) -> str:
        return f"Signature({str(self)!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Signature) and (self._core, self._levels) == (other._core, other._levels)

    def __hash__(self) -> int:
        return hash((self._core, self._levels))


Signature.__module__ = "axischeck"


def _rebuild(core: SigCore, levels: tuple[VmapLevel, ...]) -> Signature:
    """Unpickle a `Signature` (see `Signature.__reduce__`)."""
    return Signature._make(core, levels)


def _insert(
    dims: list[str] | None, spec_dims: tuple[Any, ...] | None, axis: Any, symbol: str
) -> tuple[list[str] | None, tuple[Any, ...] | None]:
    """Insert `symbol` where `axis` puts the batch dim, if the position is certain."""
    if dims is None or spec_dims is None or not (axis is None or type(axis) is int):
        return None, None
    if axis is None:
        return dims, spec_dims
    v = next((i for i, d in enumerate(spec_dims) if isinstance(d, Variadic)), None)
    n = len(spec_dims)
    if v is None:
        if not -(n + 1) <= axis <= n:
            return None, None
        c = axis if axis >= 0 else n + 1 + axis
    elif axis >= 0 and axis <= v:
        c = axis
    elif axis < 0 and -axis - 1 <= n - v - 1:
        c = n + 1 + axis
    else:
        return None, None
    return dims[:c] + [symbol] + dims[c:], spec_dims[:c] + (Named(symbol),) + spec_dims[c:]


def _render(core: SigCore, levels: tuple[VmapLevel, ...]) -> str:
    """Fold the levels into the dims where every position is certain; else show them."""
    if not levels:
        return str(core)
    ok = all(t.is_leaf for t in core.inputs) and (
        core.output is None or core.output.is_leaf or _flat_tuple(core.output)
    )
    if ok:
        ins: list[tuple[list[str] | None, tuple[Any, ...] | None]] = [
            ([str(d) for d in t.leaves[0].dims], t.leaves[0].dims) for t in core.inputs
        ]
        outs: list[tuple[list[str] | None, tuple[Any, ...] | None]] = (
            [([str(d) for d in s.dims], s.dims) for s in core.output.leaves] if core.output is not None else []
        )
        for level in levels:
            ia = level.in_axes.value
            if isinstance(ia, tuple):
                if len(ia) != len(ins):
                    ok = False
                    break
                ins = [_insert(d, sd, a, level.symbol) for (d, sd), a in zip(ins, ia, strict=True)]
            else:
                ins = [_insert(d, sd, ia, level.symbol) for d, sd in ins]
            oa = level.out_axes.value
            if isinstance(oa, tuple) and core.output is not None and not core.output.is_leaf and len(oa) == len(outs):
                outs = [_insert(d, sd, a, level.symbol) for (d, sd), a in zip(outs, oa, strict=True)]
            elif oa is None or type(oa) is int:
                outs = [_insert(d, sd, oa, level.symbol) for d, sd in outs]
            else:
                ok = False
                break
        if ok and all(d is not None for d, _ in ins + outs):
            text = ", ".join("(" + ", ".join(d or []) + ")" for d, _ in ins)
            if core.output is not None:
                text += " -> " + ", ".join("(" + ", ".join(d or []) + ")" for d, _ in outs)
            return text
    text = str(core)
    for level in levels:
        text = f"vmap[{level.symbol}](in_axes={level.in_axes}, out_axes={level.out_axes}) of {{{text}}}"
    return text


def _flat_tuple(tree: Any) -> bool:
    value = tree.value
    return type(value) is tuple and all(isinstance(v, ArraySpec) for v in value)
