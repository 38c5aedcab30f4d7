"""Hypothesis strategies that draw argument shapes for a signature and `in_axes`.

Import this module by name (it needs `hypothesis`, the `strategies` extra:
`pip install 'axischeck[strategies]'`; `import axischeck` alone does not)::

    import axischeck as ax
    import axischeck.strategies as axst
    from hypothesis import given

    SIG = "(a,b),(b,c),(a,c)->(a,c)"
    f = ax.vmap(lambda x, y, z: x @ y + z, in_axes=(0, 1, 0), signature=SIG)

    @given(axst.arrays_for(SIG, in_axes=(0, 1, 0)))
    def test_f(args):
        assert jax.eval_shape(f, *args).shape == f.predict(*args).shapes

    @given(axst.arguments_for(f))   # the same, read from the decorated function
    def test_f_again(args): ...

The strategies follow `hypothesis.extra.numpy` conventions: each function returns a
`SearchStrategy`, options are keyword-only, and sizes are kept small by default.

Only flat signatures are supported (one array per input, e.g. `"(a,b),(b)->(a)"` or
`"*s c, c -> *s"`); pytree inputs raise `ax.SpecError`.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import jax
import jax.numpy as jnp
from jax.typing import DTypeLike

try:
    from hypothesis import assume
    from hypothesis import strategies as st
    from hypothesis.errors import InvalidArgument
except ImportError as err:  # hypothesis is optional: only this module needs it
    raise ModuleNotFoundError(
        "axischeck.strategies needs hypothesis, which is not installed:"
        " pip install 'axischeck[strategies]' (or pip install hypothesis)",
        name="hypothesis",
    ) from err

from ._core._dims import Anonymous, ArraySpec, Fixed, Named, Variadic
from ._core._errors import SpecError
from ._core._jax_compat import INFER_SPECS
from ._engine._levels import MapLevel
from ._engine._mesh import MeshShape, context_mesh, spec_dims
from ._engine._signature import Signature
from ._shard_map import ShardMapped
from ._transform import Transformed

__all__ = [
    "Kind",
    "arguments_for",
    "arrays_for",
    "in_axes_for",
    "inconsistent_shapes_for",
    "out_axes_for",
    "shapes_for",
]

Shapes = tuple[tuple[int, ...], ...]
InAxes = int | None | Sequence[int | None]
Kind = Literal["batch", "symbol", "rank"]
Kind.__doc__ = """What `inconsistent_shapes_for` may break: a batch size, a dimension, or a rank.

```python
>>> import axischeck.strategies as axst
>>> kinds: tuple[axst.Kind, ...] = ("batch", "symbol")
>>> strategy = axst.inconsistent_shapes_for("(n),(n)->()", kinds=kinds)
```
"""
_ALL_KINDS: tuple[Kind, ...] = ("batch", "symbol", "rank")
_MAX_RUN = 2  # longest run of axes drawn for a variadic dimension

# ----------------------------------------------------------------- validation


def _signature(signature: Signature | str | Any) -> Signature:
    sig = signature if isinstance(signature, Signature) else Signature(signature)
    if sig.levels:
        raise SpecError(f"axischeck.strategies takes a per-example signature; got one already lifted by vmap: {sig}")
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
            raise InvalidArgument(f"in_axes={in_axes!r} has {len(axes)} entries but the signature has {n} inputs")
        for a in axes:
            if a is not None and (isinstance(a, bool) or not isinstance(a, int)):
                raise InvalidArgument(f"in_axes={in_axes!r}: each entry must be an int or None (flat tuple only)")
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
        for i, (spec, axis) in enumerate(zip(self.specs, self.axes, strict=False)):
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
    for spec, axis in zip(specs, axes, strict=False):
        if spec.variadic_index is None and _rank_needed(axis) > spec.min_rank:
            raise InvalidArgument(f"in_axes entry {axis} is out of range for an input of per-example shape {spec}")
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


def _draw_per_example(draw: st.DrawFn, plan: _Plan, force: Mapping[str, int] | None = None) -> list[tuple[int, ...]]:
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
                    runs[key] = tuple(draw(st.lists(side, min_size=lo, max_size=max(lo, _MAX_RUN))))
                shape.extend(runs[key])
        shapes.append(tuple(shape))
    return shapes


def _draw_batch(draw: st.DrawFn, plan: _Plan) -> int:
    if plan.axis_size is not None:
        return plan.axis_size
    return draw(st.integers(1, plan.max_batch))


def _batched(plan: _Plan, per_example: Sequence[tuple[int, ...]], batch: int) -> Shapes:
    return tuple(_insert_batch(s, a, batch) for s, a in zip(per_example, plan.axes, strict=False))


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
    >>> import axischeck.strategies as axst
    >>> from hypothesis import given
    >>> @given(axst.shapes_for("(a,b),(b,c)->(a,c)", in_axes=(0, 1), sizes={"b": 4}))
    ... def test_shapes(shapes):
    ...     (batch, a, b), (b2, batch2, c) = shapes
    ...     assert b == b2 == 4 and batch == batch2
    >>> test_shapes()
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
    dtype: DTypeLike | Sequence[DTypeLike] = jnp.float32,
    real: bool = False,
) -> st.SearchStrategy[tuple[jax.ShapeDtypeStruct | jax.Array, ...]]:
    """Like `shapes_for`, as `jax.ShapeDtypeStruct`s (or zero arrays with `real=True`);
    `dtype` is one dtype, or one per input.

    ```python
    >>> import axischeck.strategies as axst
    >>> from hypothesis import given
    >>> f = ax.vmap(jnp.dot, in_axes=(0, None), signature="(n),(n)->()")
    >>> @given(axst.arrays_for("(n),(n)->()", in_axes=(0, None)))
    ... def test_f(args):
    ...     assert f.predict(*args).shapes == jax.eval_shape(f, *args).shape
    >>> test_f()
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

    _dtypes(dtype, len(_input_specs(_signature(signature))))
    return strategy.map(lambda shapes: _to_arrays(shapes, dtype, real))


def _dtypes(dtype: DTypeLike | Sequence[DTypeLike], n: int) -> list[DTypeLike]:
    given: Any = dtype  # DTypeLike itself holds sequences (of field specs): decide by type
    dtypes: list[DTypeLike] = list(given) if isinstance(given, (list, tuple)) else [given] * n
    if len(dtypes) != n:
        raise InvalidArgument(f"dtype gives {len(dtypes)} dtypes for {n} inputs")
    return dtypes


def _to_arrays(
    shapes: Sequence[tuple[int, ...]], dtype: DTypeLike | Sequence[DTypeLike], real: bool
) -> tuple[jax.ShapeDtypeStruct | jax.Array, ...]:
    dtypes = _dtypes(dtype, len(shapes))
    if real:
        return tuple(jnp.zeros(s, d) for s, d in zip(shapes, dtypes, strict=False))
    return tuple(
        jax.ShapeDtypeStruct(s, d)  # type: ignore[no-untyped-call]
        for s, d in zip(shapes, dtypes, strict=False)
    )


def _levels_of(fn: Transformed[..., Any]) -> tuple[Signature, tuple[MapLevel, ...]]:
    """The per-example signature of a decorated function and its mapping levels."""
    if not isinstance(fn, Transformed):
        raise SpecError(
            f"arguments_for takes a function decorated by ax.vmap, ax.pmap, ax.shard_map or ax.check, got {fn!r}"
        )
    sig = getattr(fn, "batched_signature", None) or fn.signature
    if sig is None:
        raise SpecError(
            f"{fn._describe()} has no declared signature to draw shapes from: pass signature=..."
            " or annotate its parameters (without one, axischeck traces it, and there is"
            " nothing to property-test)"
        )
    try:
        params = list(inspect.signature(fn.__wrapped__).parameters.values())
    except (TypeError, ValueError):
        params = []  # uninspectable: positional, as drawn
    keyword_only = [p.name for p in params if p.kind is p.KEYWORD_ONLY and p.default is p.empty]
    if keyword_only:
        raise SpecError(
            f"arguments_for draws positional arguments, but {fn._describe()} needs keyword-only {keyword_only}:"
            " wrap it so that they are positional (or have defaults)"
        )
    for level in sig.levels:
        kind = getattr(level, "kind", type(level).__name__)
        if kind not in ("vmap", "pmap"):
            raise SpecError(f"arguments_for supports vmap and pmap levels, not {kind}")
        if getattr(level, "static", ()):
            raise SpecError(
                "arguments_for draws arrays only; a pmap with static_broadcasted_argnums"
                " needs its static arguments chosen by hand (use shapes_for)"
            )
    return Signature._make(sig.core), sig.levels


def arguments_for(
    fn: Transformed[..., Any],
    *,
    sizes: Mapping[str, int | Sequence[int]] | None = None,
    min_side: int = 1,
    max_side: int = 4,
    max_batch: int = 4,
    dtype: DTypeLike | Sequence[DTypeLike] = jnp.float32,
    real: bool = False,
) -> st.SearchStrategy[tuple[jax.ShapeDtypeStruct | jax.Array, ...]]:
    """Positional arguments for a decorated function, consistent with its signature and
    every level's `in_axes`, `axis_size` and (for pmap) device count.

    Reads what `fn` declares (`ax.vmap`, `ax.pmap`, `ax.check`, nested, `ax.shard_map`),
    so a property test cannot drift from the decorator. A vmap `axis_name` used as a
    dimension in the signature gets the batch size. For `ax.shard_map` the signature
    describes one device's blocks: each argument is drawn as blocks, then grown by its
    in_specs entry to the global shape (a mesh axis named as a dimension gets its size).
    `dtype` may give one dtype per input; `real=True`
    draws arrays of zeros instead of `jax.ShapeDtypeStruct`s.

    ```python
    >>> import axischeck.strategies as axst
    >>> from hypothesis import given
    >>> f = ax.vmap(jnp.dot, in_axes=(0, None), signature="(n),(n)->()")
    >>> @given(axst.arguments_for(f))
    ... def test_dot(args):
    ...     x, w = args
    ...     assert x.shape[1:] == w.shape and f.predict(x, w).shapes == x.shape[:1]
    >>> test_dot()
    ```
    """
    core, levels = _levels_of(fn)
    n = len(_input_specs(core))
    axes = [_axes_tuple(level.in_axes.value, n) for level in levels]
    first: InAxes = axes[0] if axes else None
    _make_plan(core, first, None, sizes, min_side, max_side, max_batch)  # invalid options fail now
    _dtypes(dtype, n)
    named = {d.name for spec in _input_specs(core) for d in spec.dims if isinstance(d, Named)}
    shard = fn if isinstance(fn, ShardMapped) else None

    def batch_size(level: MapLevel) -> st.SearchStrategy[int]:
        if level.axis_size is not None:
            return st.just(level.axis_size)
        cap = min(max_batch, level.devices) if level.kind == "pmap" and level.devices else max_batch
        return st.integers(1, cap)

    @st.composite
    def draw_args(draw: st.DrawFn) -> tuple[jax.ShapeDtypeStruct | jax.Array, ...]:
        batches = [draw(batch_size(level)) for level in levels]
        pins: dict[str, int | Sequence[int]] = dict(sizes or {})
        for level, b in zip(levels, batches, strict=False):
            if isinstance(level.axis_name, str) and level.axis_name in named:
                pins[level.axis_name] = b  # the axis name as a dimension is the mapped size
        mesh = None
        if shard is not None:
            mesh = shard.shard_options.mesh or context_mesh(shard.shard_options.describe())
            pins.update({name: size for name, size in zip(mesh.names, mesh.sizes, strict=True) if name in named})
        plan = _make_plan(core, first, None, pins, min_side, max_side, max_batch)
        shapes = _draw_per_example(draw, plan)
        for level_axes, b in zip(axes, batches, strict=False):
            for i, axis in enumerate(level_axes):
                r = len(shapes[i])
                # An outer level's axis counts in the rank the inner levels gave the input.
                assume(axis is None or -(r + 1) <= axis <= r)
                shapes[i] = _insert_batch(shapes[i], axis, b)
        if shard is not None and mesh is not None:  # the shard_map is outermost: its blocks hold the rest
            shapes = _global_shapes(shapes, shard, mesh)
        return _to_arrays(shapes, dtype, real)

    return draw_args()


def _global_shapes(blocks: list[tuple[int, ...]], fn: ShardMapped[..., Any], mesh: MeshShape) -> list[tuple[int, ...]]:
    """Per-device blocks grown by each argument's in_specs entry (None: passed whole)."""
    specs = fn.shard_options.in_specs
    if specs is INFER_SPECS:
        raise SpecError(
            f"arguments_for needs in_specs (or smap's in_axes) to grow per-device blocks: {fn._describe()}"
            " infers them from the arguments' shardings"
        )
    per_arg = list(specs) if isinstance(specs, (tuple, list)) else [specs] * len(blocks)
    if len(per_arg) != len(blocks):
        raise SpecError(f"arguments_for needs one in_specs entry per argument of {fn._describe()}")
    manual = fn.shard_options.axis_names or frozenset(mesh.names)
    out = []
    for block, spec in zip(blocks, per_arg, strict=True):
        if spec is None:
            out.append(block)
            continue
        dims = spec_dims(spec, mesh, manual, "an in_specs entry")
        out.append(tuple(s * (mesh.size(dims[d]) if d < len(dims) else 1) for d, s in enumerate(block)))
    return out


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
    return [i for i, spec in enumerate(plan.specs) if spec.variadic_index is None or spec.min_rank >= 1]


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
    >>> import axischeck.strategies as axst
    >>> from hypothesis import given
    >>> f = ax.vmap(jnp.dot, signature="(n),(n)->()")
    >>> @given(axst.inconsistent_shapes_for("(n),(n)->()", kinds=("batch", "symbol")))
    ... def test_f_refuses(shapes):
    ...     assert f.explain(*shapes).startswith("ArgumentError")
    >>> test_f_refuses()
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


def _concrete_dims(spec: ArraySpec, shape: tuple[int, ...]) -> list[Named | Fixed | Anonymous | Variadic]:
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
    >>> import axischeck.strategies as axst
    >>> from hypothesis import given
    >>> @given(axst.in_axes_for("(a,b),(b,c)->(a,c)", allow_negative=False))
    ... def test_axes(in_axes):
    ...     assert len(in_axes) == 2 and in_axes != (None, None)
    ...     assert all(a in (None, 0, 1, 2) for a in in_axes)
    >>> test_axes()
    ```
    """
    specs = _input_specs(_signature(signature))

    def axis(spec: ArraySpec) -> st.SearchStrategy[int]:
        r = spec.min_rank
        return st.integers(-(r + 1) if allow_negative else 0, r)

    @st.composite
    def draw_axes(draw: st.DrawFn) -> tuple[int | None, ...]:
        axes: list[int | None] = [draw(st.one_of(axis(s), st.none()) if allow_none else axis(s)) for s in specs]
        if all(a is None for a in axes):  # at least one input must be mapped
            i = draw(st.integers(0, len(specs) - 1))
            axes[i] = draw(axis(specs[i]))
        return tuple(axes)

    return draw_axes()


def out_axes_for(signature: Signature | str | Any, *, allow_negative: bool = True) -> st.SearchStrategy[int]:
    """A valid int `out_axes` for the signature's single output.

    ```python
    >>> import axischeck.strategies as axst
    >>> from hypothesis import given
    >>> @given(axst.out_axes_for("(a,b),(b,c)->(a,c)"))
    ... def test_out_axes(out_axes):
    ...     assert -3 <= out_axes <= 2   # the batched output has rank 3
    >>> test_out_axes()
    ```
    """
    sig = _signature(signature)
    out = sig.core.output
    if out is None:
        raise SpecError(f"the signature {sig} declares no output")
    if not out.is_leaf:
        raise SpecError(
            f"out_axes_for needs a single array output; {sig} declares {out} (draw one axis per output yourself)"
        )
    r = out.leaves[0].min_rank
    return st.integers(-(r + 1) if allow_negative else 0, r)
