"""Hypothesis strategies that draw argument shapes for a signature and `in_axes`.

Import this module by name (it needs `hypothesis`; `import axischeck` alone does not)::

    import axischeck as ax
    import axischeck.strategies as axst
    from hypothesis import given

    SIG = "(a,b),(b,c),(a,c)->(a,c)"
    f = ax.vmap(lambda x, y, z: x @ y + z, in_axes=(0, 1, 0), signature=SIG)

    @given(axst.arrays_for(SIG, in_axes=(0, 1, 0)))
    def test_f(args):
        assert jax.eval_shape(f, *args).shape == f.predict(*args).shapes

The strategies follow `hypothesis.extra.numpy` conventions: each function returns a
`SearchStrategy`, options are keyword-only, and sizes are kept small by default.

Only flat signatures are supported (one array per input, e.g. `"(a,b),(b)->(a)"` or
`"*s c, c -> *s"`); pytree inputs raise `ax.SpecError`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import jax
import jax.numpy as jnp
from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument
from jax.typing import DTypeLike

from ._dims import Anonymous, ArraySpec, Fixed, Named, Variadic
from ._errors import SpecError
from ._signature import Signature

__all__ = [
    "Kind",
    "arrays_for",
    "in_axes_for",
    "inconsistent_shapes_for",
    "out_axes_for",
    "shapes_for",
]

Shapes = tuple[tuple[int, ...], ...]
InAxes = int | None | Sequence[int | None]
Kind = Literal["batch", "symbol", "rank"]
_ALL_KINDS: tuple[Kind, ...] = ("batch", "symbol", "rank")
_MAX_RUN = 2  # longest run of axes drawn for a variadic dimension

# ----------------------------------------------------------------- validation


def _signature(signature: Signature | str | Any) -> Signature:
    sig = signature if isinstance(signature, Signature) else Signature(signature)
    if sig.levels:
        raise SpecError(
            "axischeck.strategies takes a per-example signature; "
            f"got one already lifted by vmap: {sig}"
        )
    return sig


def _input_specs(sig: Signature) -> tuple[ArraySpec, ...]:
    specs = []
    for i, tree in enumerate(sig.core.inputs):
        if not tree.is_leaf:
            raise SpecError(
                f"axischeck.strategies supports only flat signatures (one array per input); "
                f"input {i} is the pytree {tree}"
            )
        specs.append(tree.leaves[0])
    if not specs:
        raise SpecError(f"the signature {sig} has no inputs to draw shapes for")
    return tuple(specs)


def _check_int(name: str, value: object, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise InvalidArgument(f"{name}={value!r} must be an int >= {low}")
    return value


def _axes_tuple(in_axes: InAxes, n: int) -> tuple[int | None, ...]:
    if in_axes is None or (isinstance(in_axes, int) and not isinstance(in_axes, bool)):
        return (in_axes,) * n
    if isinstance(in_axes, (list, tuple)):
        axes = tuple(in_axes)
        if len(axes) != n:
            raise InvalidArgument(
                f"in_axes={in_axes!r} has {len(axes)} entries but the signature has {n} inputs"
            )
        for a in axes:
            if a is not None and (isinstance(a, bool) or not isinstance(a, int)):
                raise InvalidArgument(
                    f"in_axes={in_axes!r}: each entry must be an int or None (flat tuple only)"
                )
        return axes
    raise InvalidArgument(f"in_axes={in_axes!r} must be an int, None, or a flat tuple")


def _rank_needed(axis: int | None) -> int:
    """The least per-example rank for which `axis` is a valid in_axis."""
    if axis is None:
        return 0
    return axis if axis >= 0 else -axis - 1


def _insert_batch(shape: tuple[int, ...], axis: int | None, batch: int) -> tuple[int, ...]:
    if axis is None:
        return shape
    r = len(shape)
    pos = axis if axis >= 0 else axis + r + 1
    pos = min(max(pos, 0), r)  # only clamps for deliberately wrong ranks
    return shape[:pos] + (batch,) + shape[pos:]


@dataclass(frozen=True)
class _Plan:
    specs: tuple[ArraySpec, ...]
    axes: tuple[int | None, ...]
    axis_size: int | None
    sizes: Mapping[str, int | tuple[int, ...]]
    min_side: int
    max_side: int
    max_batch: int

    def min_run(self) -> dict[str | int, int]:
        """Least run length per variadic (name, or input index when anonymous)."""
        out: dict[str | int, int] = {}
        for i, (spec, axis) in enumerate(zip(self.specs, self.axes)):
            v = spec.variadic_index
            if v is None:
                continue
            d = spec.dims[v]
            assert isinstance(d, Variadic)
            key: str | int = i if d.name is None else d.name
            need = max(0, _rank_needed(axis) - spec.min_rank)
            out[key] = max(out.get(key, 0), need)
        return out


def _make_plan(
    signature: Signature | str | Any,
    in_axes: InAxes,
    axis_size: int | None,
    sizes: Mapping[str, int | Sequence[int]] | None,
    min_side: int,
    max_side: int,
    max_batch: int,
) -> _Plan:
    sig = _signature(signature)
    specs = _input_specs(sig)
    axes = _axes_tuple(in_axes, len(specs))
    _check_int("min_side", min_side, 0)
    _check_int("max_side", max_side, min_side)
    _check_int("max_batch", max_batch, 1)
    if axis_size is not None:
        _check_int("axis_size", axis_size, 0)
    for spec, axis in zip(specs, axes):
        if spec.variadic_index is None and _rank_needed(axis) > spec.min_rank:
            raise InvalidArgument(
                f"in_axes entry {axis} is out of range for an input of per-example shape {spec}"
            )
    named = {d.name for s in specs for d in s.dims if isinstance(d, Named)}
    runs = {d.name for s in specs for d in s.dims if isinstance(d, Variadic) and d.name}
    pinned: dict[str, int | tuple[int, ...]] = {}
    for key, value in (sizes or {}).items():
        if key in named:
            pinned[key] = _check_int(f"sizes[{key!r}]", value, 0)
        elif key in runs:
            if not isinstance(value, (tuple, list)):
                raise InvalidArgument(f"sizes[{key!r}] pins the run *{key}: give a tuple of ints")
            pinned[key] = tuple(_check_int(f"sizes[{key!r}]", v, 0) for v in value)
        else:
            raise InvalidArgument(f"sizes pins {key!r}, which no input of {sig} uses")
    plan = _Plan(specs, axes, axis_size, pinned, min_side, max_side, max_batch)
    for run_key, need in plan.min_run().items():
        run = pinned.get(run_key) if isinstance(run_key, str) else None
        if isinstance(run, tuple) and len(run) < need:
            raise InvalidArgument(f"sizes[{run_key!r}]={run} is too short for in_axes={in_axes!r}")
    return plan


# -------------------------------------------------------------------- drawing


def _draw_per_example(
    draw: st.DrawFn, plan: _Plan, force: Mapping[str, int] | None = None
) -> list[tuple[int, ...]]:
    side = st.integers(plan.min_side, plan.max_side)
    env: dict[str, int] = {}
    runs: dict[str | int, tuple[int, ...]] = {}
    min_run = plan.min_run()
    for name, value in plan.sizes.items():
        if isinstance(value, tuple):
            runs[name] = value
        else:
            env[name] = value
    env.update(force or {})
    shapes = []
    for i, spec in enumerate(plan.specs):
        shape: list[int] = []
        for d in spec.dims:
            if isinstance(d, Named):
                if d.name not in env:
                    env[d.name] = draw(side)
                shape.append(env[d.name])
            elif isinstance(d, Fixed):
                shape.append(d.size)
            elif isinstance(d, Anonymous):
                shape.append(draw(side))
            else:
                key: str | int = i if d.name is None else d.name
                if key not in runs:
                    lo = min_run.get(key, 0)
                    runs[key] = tuple(
                        draw(st.lists(side, min_size=lo, max_size=max(lo, _MAX_RUN)))
                    )
                shape.extend(runs[key])
        shapes.append(tuple(shape))
    return shapes


def _draw_batch(draw: st.DrawFn, plan: _Plan) -> int:
    if plan.axis_size is not None:
        return plan.axis_size
    return draw(st.integers(1, plan.max_batch))


def _batched(plan: _Plan, per_example: Sequence[tuple[int, ...]], batch: int) -> Shapes:
    return tuple(_insert_batch(s, a, batch) for s, a in zip(per_example, plan.axes))


def shapes_for(
    signature: Signature | str | Any,
    *,
    in_axes: InAxes = 0,
    axis_size: int | None = None,
    sizes: Mapping[str, int | Sequence[int]] | None = None,
    min_side: int = 1,
    max_side: int = 5,
    max_batch: int = 5,
) -> st.SearchStrategy[Shapes]:
    """Batched argument shapes, one tuple per input, that satisfy `signature` under `in_axes`.

    Named dimensions get one size everywhere, `_` is drawn per axis, integers are kept,
    and a variadic (`*s`, `...`) is a run of 0-2 axes (a named run is the same run in
    every input; runs grow when a negative `in_axes` entry needs more rank). The batch
    size is `axis_size`, or drawn in `[1, max_batch]`; it is inserted at each input's
    canonical in_axis. `sizes` pins symbols: `{"b": 4}` or `{"s": (2, 3)}` for `*s`.

    ```python
    >>> shapes_for("(a,b),(b,c)->(a,c)", in_axes=(0, 1), sizes={"b": 4}).example()
    ((3, 2, 4), (4, 3, 1))
    ```
    """
    plan = _make_plan(signature, in_axes, axis_size, sizes, min_side, max_side, max_batch)

    @st.composite
    def draw_shapes(draw: st.DrawFn) -> Shapes:
        per_example = _draw_per_example(draw, plan)
        return _batched(plan, per_example, _draw_batch(draw, plan))

    return draw_shapes()


def arrays_for(
    signature: Signature | str | Any,
    *,
    in_axes: InAxes = 0,
    axis_size: int | None = None,
    sizes: Mapping[str, int | Sequence[int]] | None = None,
    min_side: int = 1,
    max_side: int = 5,
    max_batch: int = 5,
    dtype: DTypeLike = jnp.float32,
    real: bool = False,
) -> st.SearchStrategy[tuple[jax.ShapeDtypeStruct | jax.Array, ...]]:
    """Like `shapes_for`, as `jax.ShapeDtypeStruct`s (or zero arrays with `real=True`).

    ```python
    >>> args = arrays_for("(n),(n)->()", in_axes=(0, None)).example()
    >>> [a.shape for a in args]
    [(2, 3), (3,)]
    ```
    """
    strategy = shapes_for(
        signature,
        in_axes=in_axes,
        axis_size=axis_size,
        sizes=sizes,
        min_side=min_side,
        max_side=max_side,
        max_batch=max_batch,
    )

    def to_arrays(shapes: Shapes) -> tuple[jax.ShapeDtypeStruct | jax.Array, ...]:
        if real:
            return tuple(jnp.zeros(s, dtype) for s in shapes)
        return tuple(
            jax.ShapeDtypeStruct(s, dtype)  # type: ignore[no-untyped-call]
            for s in shapes
        )

    return strategy.map(to_arrays)


# ------------------------------------------------------------- inconsistency


def _shared_symbols(plan: _Plan) -> list[str]:
    """Named symbols that occur at least twice among the inputs (and can be broken)."""
    count: dict[str, int] = {}
    for spec in plan.specs:
        for d in spec.dims:
            if isinstance(d, Named):
                count[d.name] = count.get(d.name, 0) + 1
    return sorted(k for k, n in count.items() if n >= 2 and plan.sizes.get(k) not in (0, 1))


def _rank_breakable(plan: _Plan) -> list[int]:
    return [
        i
        for i, spec in enumerate(plan.specs)
        if spec.variadic_index is None or spec.min_rank >= 1
    ]


def _applicable(plan: _Plan, kinds: Sequence[Kind]) -> list[Kind]:
    mapped = sum(a is not None for a in plan.axes)
    out: list[Kind] = []
    for kind in kinds:
        if kind == "batch" and (mapped >= 2 or (mapped >= 1 and plan.axis_size is not None)):
            out.append(kind)
        elif kind == "symbol" and _shared_symbols(plan):
            out.append(kind)
        elif kind == "rank" and _rank_breakable(plan):
            out.append(kind)
    return out


def _other_size(draw: st.DrawFn, plan: _Plan, avoid: set[int]) -> int:
    """A side length >= 2 not in `avoid` (size 1 is avoided: it would broadcast)."""
    lo = max(2, plan.min_side)
    hi = max(plan.max_side, lo + len(avoid) + 1)
    return draw(st.sampled_from([v for v in range(lo, hi + 1) if v not in avoid]))


def inconsistent_shapes_for(
    signature: Signature | str | Any,
    *,
    in_axes: InAxes = 0,
    axis_size: int | None = None,
    sizes: Mapping[str, int | Sequence[int]] | None = None,
    min_side: int = 1,
    max_side: int = 5,
    max_batch: int = 5,
    kinds: Sequence[Kind] = _ALL_KINDS,
) -> st.SearchStrategy[Shapes]:
    """Batched shapes that break exactly one thing, so a correct check must reject them.

    Each draw picks one of `kinds` that the signature and axes allow:

    - `"batch"`: one mapped argument's batch size differs from the others' (or from
      `axis_size`); needs two mapped inputs, or one and `axis_size`;
    - `"symbol"`: one occurrence of a named dimension that appears at least twice gets
      another size (both sizes are >= 2, since size 1 would broadcast in most code);
    - `"rank"`: one argument has one axis too many or too few (for a variadic input,
      too few only). Whether *your function* rejects a wrong rank depends on it
      (`jnp.dot` accepts a matrix for a vector), so leave `"rank"` out when it does not.

    Raises `InvalidArgument` when none of `kinds` is possible.

    ```python
    >>> inconsistent_shapes_for("(n),(n)->()", kinds=("symbol",)).example()
    ((2, 3), (2, 4))
    ```
    """
    plan = _make_plan(signature, in_axes, axis_size, sizes, min_side, max_side, max_batch)
    for k in kinds:
        if k not in _ALL_KINDS:
            raise InvalidArgument(f"kinds entry {k!r} is not one of {_ALL_KINDS}")
    usable = _applicable(plan, kinds)
    if not usable:
        raise InvalidArgument(
            f"no inconsistency of kinds {tuple(kinds)} is possible for "
            f"{len(plan.specs)} inputs with in_axes={plan.axes} and axis_size={axis_size}"
        )

    @st.composite
    def draw_shapes(draw: st.DrawFn) -> Shapes:
        kind = draw(st.sampled_from(usable))
        if kind == "batch":
            per_example = _draw_per_example(draw, plan)
            batch = _draw_batch(draw, plan)
            mapped = [i for i, a in enumerate(plan.axes) if a is not None]
            victim = draw(st.sampled_from(mapped))
            choices = [b for b in range(1, max(plan.max_batch, batch + 1) + 1) if b != batch]
            wrong = draw(st.sampled_from(choices))
            shapes = list(_batched(plan, per_example, batch))
            shapes[victim] = _insert_batch(per_example[victim], plan.axes[victim], wrong)
            return tuple(shapes)
        if kind == "symbol":
            name = draw(st.sampled_from(_shared_symbols(plan)))
            pinned = plan.sizes.get(name)
            size = pinned if isinstance(pinned, int) else _other_size(draw, plan, set())
            per_example = _draw_per_example(draw, plan, force={name: size})
            places = [
                (i, j)
                for i, spec in enumerate(plan.specs)
                for j, d in enumerate(_concrete_dims(spec, per_example[i]))
                if isinstance(d, Named) and d.name == name
            ]
            i, j = draw(st.sampled_from(places))
            wrong = _other_size(draw, plan, {size})
            broken = list(per_example[i])
            broken[j] = wrong
            per_example[i] = tuple(broken)
            return _batched(plan, per_example, _draw_batch(draw, plan))
        # kind == "rank"
        per_example = _draw_per_example(draw, plan)
        victim = draw(st.sampled_from(_rank_breakable(plan)))
        spec = plan.specs[victim]
        shape = per_example[victim]
        grow = spec.variadic_index is None and (len(shape) == 0 or draw(st.booleans()))
        if grow:
            pos = draw(st.integers(0, len(shape)))
            extra = draw(st.integers(max(2, plan.min_side), max(2, plan.max_side)))
            shape = shape[:pos] + (extra,) + shape[pos:]
        else:
            # Drop below the least rank the spec accepts (min_rank - 1 axes in all).
            keep = spec.min_rank - 1
            concrete = _concrete_dims(spec, shape)
            dims = [k for k, d in enumerate(concrete) if not isinstance(d, Variadic)]
            drop = draw(st.sampled_from(dims))
            kept = [k for k in dims if k != drop][:keep]
            shape = tuple(shape[k] for k in kept)
        per_example[victim] = shape
        return _batched(plan, per_example, _draw_batch(draw, plan))

    return draw_shapes()


def _concrete_dims(
    spec: ArraySpec, shape: tuple[int, ...]
) -> list[Named | Fixed | Anonymous | Variadic]:
    """The dim of `spec` behind each axis of per-example `shape` (a run repeats its variadic)."""
    v = spec.variadic_index
    if v is None:
        return list(spec.dims)
    run = len(shape) - spec.min_rank
    return list(spec.dims[:v]) + [spec.dims[v]] * run + list(spec.dims[v + 1 :])


# ---------------------------------------------------------------------- axes


def in_axes_for(
    signature: Signature | str | Any,
    *,
    allow_none: bool = True,
    allow_negative: bool = True,
) -> st.SearchStrategy[tuple[int | None, ...]]:
    """Valid `in_axes` tuples, one entry per input, never all None.

    An entry lies in `[-(r+1), r]` for the input's least per-example rank r (so it is
    valid whatever length a variadic run gets).

    ```python
    >>> in_axes_for("(a,b),(b,c),(a,c)->(a,c)").example()
    (0, -1, None)
    ```
    """
    specs = _input_specs(_signature(signature))

    def axis(spec: ArraySpec) -> st.SearchStrategy[int]:
        r = spec.min_rank
        return st.integers(-(r + 1) if allow_negative else 0, r)

    @st.composite
    def draw_axes(draw: st.DrawFn) -> tuple[int | None, ...]:
        axes: list[int | None] = [
            draw(st.one_of(axis(s), st.none()) if allow_none else axis(s)) for s in specs
        ]
        if all(a is None for a in axes):  # at least one input must be mapped
            i = draw(st.integers(0, len(specs) - 1))
            axes[i] = draw(axis(specs[i]))
        return tuple(axes)

    return draw_axes()


def out_axes_for(
    signature: Signature | str | Any, *, allow_negative: bool = True
) -> st.SearchStrategy[int]:
    """A valid int `out_axes` for the signature's single output.

    ```python
    >>> out_axes_for("(a,b),(b,c)->(a,c)").example()
    -2
    ```
    """
    sig = _signature(signature)
    out = sig.core.output
    if out is None:
        raise SpecError(f"the signature {sig} declares no output")
    if not out.is_leaf:
        raise SpecError(
            f"out_axes_for needs a single array output; {sig} declares {out} "
            "(draw one axis per output yourself)"
        )
    r = out.leaves[0].min_rank
    return st.integers(-(r + 1) if allow_negative else 0, r)
