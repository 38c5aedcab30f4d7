"""`axischeck.smap`: `jax.smap` (a shard_map over one mesh axis) with prediction and checks.

`jax.smap(f, in_axes=k, out_axes=m, axis_name=a)` is `jax.shard_map` of `f` over the
context mesh with `axis_names={a}`, `check_vma=True`, and each axis `k` turned into the
PartitionSpec that puts `a` at position `k` (`None`: `P()`, the whole array on every
device). axischeck runs JAX's own `jax.smap` and predicts with the shard_map model from
those same specs, so every check, block and message follows from the shard_map rules.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any, ClassVar, ParamSpec, TypeVar, cast, overload

import jax

from ._core._errors import AxisCheckError, AxisCheckWarning, SpecError, warn_at_user
from ._core._jax_compat import INFER_SPECS, JAX_SMAP, traceback_boundary
from ._core._text import short_repr
from ._engine._predictor import Predictor
from ._engine._shard_model import ShardOptions, smap_specs
from ._engine._signature import Signature, SignatureLike
from ._engine._transform_models import Models, shard_models
from ._options import Options, Shown, refuse_cyclic_axes, refusing_misspelled_options, require_callable, typed_key
from ._shard_map import Settled, ShardMapped, ShardPredictor
from ._switch import checks_off, unchecked

P = ParamSpec("P")
R = TypeVar("R")

INFER_AXES: Any = INFER_SPECS
"""`jax.smap`'s default `in_axes`: JAX's `Infer`, the same object as shard_map's default
`in_specs` (each argument's own sharding, which only Explicit mesh axes have)."""

# jax.smap builds a list of `axis` Nones for each axis: refuse axes no array can have
# (numpy's limit is 64 dims) before JAX allocates such a list for a typo like 10**12.
_MAX_AXIS = 1 << 16


def _check_options(in_axes: Any, out_axes: Any, axis_name: object) -> None:
    """What JAX refuses in these options, in axischeck's terms (checked in JAX's order)."""
    if isinstance(axis_name, (list, tuple)):
        raise SpecError(
            f"smap axis_name must be one mesh axis name, got {short_repr(axis_name)}",
            hint="nest one smap per axis, or use ax.shard_map(..., axis_names={...}) for several axes",
        )
    try:
        hash(axis_name)
    except TypeError:
        raise SpecError(
            f"smap axis_name must be a hashable mesh axis name (a str), got {short_repr(axis_name)}"
        ) from None
    if in_axes is not INFER_AXES:
        if in_axes is not None and not isinstance(in_axes, (int, tuple)):
            hint = "a tuple" if isinstance(in_axes, list) else "a Python int" if hasattr(in_axes, "__index__") else ""
            raise SpecError(
                "smap in_axes must be an int, None, or a tuple with one entry per positional argument, but got"
                f" {short_repr(in_axes)} (of type {type(in_axes).__name__})",
                hint=f"write it as {hint}" if hint else None,
            )
        _check_leaves(in_axes, "in_axes")
    _check_leaves(out_axes, "out_axes")


def _check_leaves(axes: Any, what: str) -> None:
    paths, _ = jax.tree_util.tree_flatten_with_path(axes)
    for path, leaf in paths:
        if not isinstance(leaf, int):
            hint = " (write a Python int)" if hasattr(leaf, "__index__") else ""
            raise SpecError(
                f"smap {what} entries must be ints or None, but {what}{jax.tree_util.keystr(path)} is"
                f" {short_repr(leaf)} (of type {type(leaf).__name__}){hint}"
            )


def _check_sizes(axes: Any, what: str) -> None:
    for leaf in jax.tree_util.tree_leaves(axes):
        if isinstance(leaf, int) and leaf > _MAX_AXIS:
            raise SpecError(f"smap {what} holds axis {leaf}, which no array has (numpy allows at most 64 dims)")


def _warn_negative(options: ShardOptions, in_axes: Any, out_axes: Any) -> None:
    """JAX answers a negative axis silently with axis 0: almost never what was meant."""
    found = [
        f"{what}{jax.tree_util.keystr(path)}={leaf}"
        for what, axes in (("in_axes", in_axes), ("out_axes", out_axes))
        for path, leaf in jax.tree_util.tree_flatten_with_path(axes)[0]
        if isinstance(leaf, int) and leaf < 0
    ]
    if found:
        warn_at_user(
            AxisCheckWarning(
                f"{options.describe()}: jax.smap splits (or concatenates along) axis 0 for a negative axis"
                f" ({', '.join(found)}), not the axis counted from the end; axischeck predicts what JAX"
                " does. Hint: write the axis as a non-negative number (for the last axis of a rank-r array, r - 1)"
            )
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class SmapOptions(Options[Settled]):
    """`jax.smap`'s options, as given (see `smap`): a transform's `options`, frozen.

    ```python
    >>> ax.smap(lambda a: a, in_axes=1, out_axes=1, axis_name="x").options.as_kwargs()
    {'in_axes': 1, 'out_axes': 1, 'axis_name': 'x'}
    ```

    Validated into the shard_map options they stand for (`Settled`).
    """

    in_axes: Any = INFER_AXES
    out_axes: Any
    axis_name: Hashable

    kind: ClassVar[str] = "smap"
    predictor: ClassVar[type[Predictor]] = ShardPredictor

    def key(self) -> Hashable:
        return typed_key("smap", self.in_axes, self.out_axes, self.axis_name)

    def __post_init__(self) -> None:
        refuse_cyclic_axes(self.in_axes, self.out_axes, "smap")
        _check_sizes(self.in_axes, "in_axes")
        _check_sizes(self.out_axes, "out_axes")

    def explain_refusal(self, fun: Callable[..., Any]) -> None:
        self.validate()  # JAX checks smap's options before the function
        require_callable(fun, "smap")

    def validate(self) -> Settled:
        in_axes, out_axes, axis_name = self.in_axes, self.out_axes, self.axis_name
        _check_options(in_axes, out_axes, axis_name)
        in_specs = INFER_SPECS if in_axes is INFER_AXES else smap_specs(axis_name, in_axes)
        names = cast(frozenset[str], frozenset({axis_name}))  # JAX takes any hashable name
        options = ShardOptions(
            None, None, in_specs, smap_specs(axis_name, out_axes), names, True, "", (in_axes, out_axes)
        )
        # smap passes None as P(): every argument is split or replicated, none passed whole
        return Settled(options, has_static=False, for_prediction_only=False)

    @staticmethod
    def models(
        meaning: Settled, fun: Callable[..., Any], held: Callable[..., Any], signature: Signature | None
    ) -> Models:
        return shard_models(fun, held, signature, meaning.options)

    def jax_transform(self, fun: Callable[..., Any]) -> Callable[..., Any]:
        return JAX_SMAP(fun, in_axes=self.in_axes, out_axes=self.out_axes, axis_name=self.axis_name)  # type: ignore[no-any-return]


class Smapped(ShardMapped[P, R]):
    """A function wrapped by `axischeck.smap` (see `smap`): a `ShardMapped` whose options
    are smap's (`in_axes`, `out_axes`, `axis_name`), over the context mesh.

    ```python
    >>> f = ax.smap(lambda a: a * 2, in_axes=1, out_axes=1, axis_name="x")
    >>> f.in_axes, f.axis_name, f.predict_with_mesh({"x": 8}, (3, 64)).block_shapes
    (1, 'x', Shape(3, 8))
    ```
    """

    in_axes: Shown[Any] = Shown()
    out_axes: Shown[Any] = Shown()
    axis_name: Shown[Hashable] = Shown()

    def __init__(self, f: Callable[P, R], options: SmapOptions, signature: SignatureLike | None) -> None:
        if JAX_SMAP is None:
            raise AxisCheckError(
                f"axischeck.smap runs jax.smap, which JAX {jax.__version__} does not have",
                hint="upgrade JAX, or use ax.shard_map(f, in_specs=..., out_specs=..., axis_names={axis_name})",
            )
        super().__init__(f, options, signature)
        _warn_negative(self.shard_options, options.in_axes, options.out_axes)

    def _remake(self) -> tuple[Callable[..., Any], dict[str, Any]]:
        return smap, {**self.options.as_kwargs(), "signature": self._declared}


@overload
def smap(
    f: Callable[P, R],
    /,
    *,
    in_axes: Any = INFER_AXES,
    out_axes: Any,
    axis_name: Hashable,
    signature: SignatureLike | None = None,
) -> Smapped[P, R]: ...


@overload
def smap(
    f: None = None,
    /,
    *,
    in_axes: Any = INFER_AXES,
    out_axes: Any,
    axis_name: Hashable,
    signature: SignatureLike | None = None,
) -> Callable[[Callable[P, R]], Smapped[P, R]]: ...


@traceback_boundary
@refusing_misspelled_options
def smap(
    f: Callable[P, R] | None = None,
    /,
    *,
    in_axes: Any = INFER_AXES,
    out_axes: Any,
    axis_name: Hashable,
    signature: SignatureLike | None = None,
) -> Smapped[P, R] | Callable[[Callable[P, R]], Smapped[P, R]]:
    """Drop-in `jax.smap` that predicts, checks and explains its axes.

    Same parameters as `jax.smap`, plus `signature` (the per-device signature: the shapes
    of one device's blocks). Like JAX, it maps over the mesh set by `jax.set_mesh` (or
    `jax.sharding.use_abstract_mesh`, to predict for a mesh this machine does not have);
    `predict_with_mesh` tries another mesh. Note that jax.smap (0.10.2) reads a negative
    axis as axis 0: axischeck predicts that and warns.

    ```python
    >>> from jax.sharding import AbstractMesh, AxisType
    >>> mesh = AbstractMesh((64,), ("x",), axis_types=(AxisType.Auto,))  # 64 devices, to plan for
    >>> f = ax.smap(lambda a: jax.lax.psum(a, "x"), in_axes=0, out_axes=None, axis_name="x")
    >>> with jax.sharding.use_abstract_mesh(mesh):
    ...     f.predict((256, 3)).shapes
    Shape(4, 3)
    >>> try:
    ...     with jax.sharding.use_abstract_mesh(mesh):
    ...         f.predict((100, 3))
    ... except ax.ArgumentError as err:
    ...     print(err.problem)
    the in_axes entry of a is 0, which splits axis 0 of a (size 100, shape (100, 3)) over mesh axis 'x'
    (size 64), but 64 does not divide 100
    ```
    """
    if checks_off():
        return unchecked(JAX_SMAP, f, in_axes=in_axes, out_axes=out_axes, axis_name=axis_name)  # type: ignore[no-any-return]
    options = SmapOptions(in_axes=in_axes, out_axes=out_axes, axis_name=axis_name)
    if f is None:

        def decorate(g: Callable[P, R]) -> Smapped[P, R]:
            return Smapped(g, options, signature)

        return decorate
    return Smapped(f, options, signature)
