"""`axischeck.pmap`: `jax.pmap` with a per-example signature, prediction and checks."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any, ClassVar, ParamSpec, TypeVar, overload

import jax

from ._core._axes import check_axis_name, check_axis_size, freeze_out_axes, freeze_pmap_in_axes
from ._core._errors import AxisCheckError, SpecError
from ._core._jax_compat import JAX_PMAP, traceback_boundary
from ._core._job import this_job
from ._core._leaves import shapes_as_structs
from ._core._prediction import Prediction
from ._core._text import short_repr
from ._engine._levels import MapLevel
from ._engine._models import MapModel
from ._engine._signature import Signature, SignatureLike
from ._engine._transform_models import Models, level_models
from ._options import Options, Shown, custom_axes, refuse_cyclic_axes, refusing_misspelled_options, typed_key
from ._switch import checks_off, unchecked
from ._transform import Transformed, described

P = ParamSpec("P")
R = TypeVar("R")


def _argnums(value: int | Iterable[int], what: str) -> tuple[int, ...]:
    try:
        nums = (value,) if isinstance(value, int) else tuple(value)
    except TypeError:
        raise SpecError(f"pmap {what} must be an int or a sequence of ints, got {short_repr(value)}") from None
    if not all(type(n) is int for n in nums):
        raise SpecError(f"pmap {what} must be ints, got {short_repr(value)}")
    return nums


def _checked_devices(devices: Sequence[Any] | None, backend: str | None) -> tuple[Any, ...] | None:
    """`devices` as a tuple, checked as JAX checks them (a backend name, too), without
    asking JAX for any device."""
    if devices is not None:
        if not isinstance(devices, (list, tuple)) or not all(isinstance(d, jax.Device) for d in devices):
            raise SpecError(
                f"pmap devices must be a list of jax devices (e.g. jax.devices()[:4]), got {short_repr(devices)}"
            )
        if len(devices) == 0:
            raise SpecError("'devices' argument to pmap must be non-empty, or None")
        return tuple(devices)
    if backend is not None and not isinstance(backend, str):
        raise SpecError(f"pmap backend must be a platform name such as 'cpu', got {short_repr(backend)}")
    return None


@dataclass(frozen=True, slots=True)
class Unplaced:
    """pmap's options in the engine's terms, but for the devices: its level, and where
    its devices come from (`devices` as given, else every device of `backend`).

    They are counted when the models are made (`placed`, at first use), not when the
    transform is: counting them starts JAX's backends, after which
    `jax.distributed.initialize` refuses to run, so a pmap decorated at import must not,
    in a program that starts a job of several processes later."""

    level: MapLevel
    devices: tuple[Any, ...] | None
    backend: str | None

    def placed(self) -> MapLevel:
        """The level for the device count JAX would use, and (in a job of several
        processes) how the processes share the devices."""
        if self.devices is not None:
            count = len(self.devices)
        else:
            try:
                count = len(jax.devices(self.backend))
            except RuntimeError as err:
                raise SpecError(f"pmap backend {self.backend!r} is not available: {err}") from None
        return replace(self.level, devices=count, job=this_job(self.devices, self.backend))


@dataclass(frozen=True, slots=True)
class PmapOptions(Options[Unplaced | None]):
    """`jax.pmap`'s options, as given (see `pmap`): a transform's `options`, frozen.

    ```python
    >>> ax.pmap(lambda x: x, axis_name="i").options.axis_name
    'i'
    ```

    Validated into a `MapLevel` whose devices are counted at first use (see `Unplaced`),
    or None for spec types axischeck cannot model.
    """

    axis_name: Hashable | None = None
    in_axes: Any = 0
    out_axes: Any = 0
    static_broadcasted_argnums: int | Iterable[int] = ()
    devices: Sequence[Any] | None = None
    backend: str | None = None
    axis_size: int | None = None
    donate_argnums: int | Iterable[int] = ()

    kind: ClassVar[str] = "pmap"
    jax_caches_traces: ClassVar[bool] = True

    @property
    def defers_to_jax(self) -> bool:
        return custom_axes(self.in_axes, self.out_axes)

    @property
    def rides_jax_trace(self) -> bool:
        """A None in out_axes takes device 0's block of that output: whether it varies
        over the devices is read from JAX's own trace of the call (see `_in_trace`)."""
        leaves = jax.tree_util.tree_leaves(self.out_axes, is_leaf=lambda x: x is None)
        return any(leaf is None for leaf in leaves)

    def key(self) -> Hashable:
        return typed_key("pmap", *self.as_kwargs().values())

    def __post_init__(self) -> None:
        refuse_cyclic_axes(self.in_axes, self.out_axes, "pmap")

    def validate(self) -> Unplaced | None:
        if self.defers_to_jax:
            return None
        in_axes = freeze_pmap_in_axes(self.in_axes)
        out_axes = freeze_out_axes(self.out_axes, "pmap")
        size = check_axis_size(self.axis_size, "pmap")
        check_axis_name(self.axis_name, "pmap axis_name")
        static = _argnums(self.static_broadcasted_argnums, "static_broadcasted_argnums")
        _argnums(self.donate_argnums, "donate_argnums")
        devices = _checked_devices(self.devices, self.backend)
        statics = tuple(sorted(n for n in static if n >= 0))  # JAX ignores negative static argnums
        level = MapLevel(in_axes, out_axes, size, self.axis_name, kind="pmap", static=statics)
        return Unplaced(level, devices, self.backend)

    @staticmethod
    def models(
        meaning: Unplaced | None, fun: Callable[..., Any], held: Callable[..., Any], signature: Signature | None
    ) -> Models:
        return level_models(meaning.placed() if meaning is not None else None, fun, held, signature)

    def jax_transform(self, fun: Callable[..., Any]) -> Callable[..., Any]:
        return JAX_PMAP(fun, **self.as_kwargs())  # type: ignore[no-any-return]


class Pmapped(Transformed[P, R]):
    """A function wrapped by `axischeck.pmap` (see `pmap`): like `Vmapped`, plus
    `predict_with_devices` for a machine with another device count.

    ```python
    >>> f = ax.pmap(lambda x: jax.lax.all_gather(x, "i"), axis_name="i")
    >>> f.predict_with_devices(8, (8, 3)).shapes       # each device gathers all 8 rows
    Shape(8, 8, 3)
    >>> try:
    ...     f.predict_with_devices(4, (8, 3))
    ... except ax.ArgumentError as err:
    ...     print(err.problem)
    pmap maps an axis of size 8 over devices, but 4 device(s) are available:
    the size must be between 1 and the device count
    ```
    """

    axis_name: Shown[Hashable | None] = Shown()
    in_axes: Shown[Any] = Shown()
    out_axes: Shown[Any] = Shown()

    def _remake(self) -> tuple[Callable[..., Any], dict[str, Any]]:
        return pmap, {**self.options.as_kwargs(), "signature": self._declared}

    def _describe(self) -> str:
        return described(self)

    @traceback_boundary
    def predict_with_devices(self, devices: int, *args: Any, **kwargs: Any) -> Prediction:
        """`predict` for a machine with `devices` devices (check a 64-device run on a laptop)."""
        if type(devices) is not int or devices < 1:
            raise SpecError(f"predict_with_devices needs a device count >= 1, got {short_repr(devices)}")
        model = self.model
        assert isinstance(model, MapModel)
        model = replace(model, level=replace(model.level, devices=devices, job=None))  # a machine of its own
        args, kwargs = shapes_as_structs(args, kwargs, self._predictor.tuple_dtypes)
        try:
            return self._predictor.derive(args, kwargs, model)
        except AxisCheckError as err:
            raise err from err.__cause__


@overload
def pmap(
    fun: Callable[P, R],
    axis_name: Hashable | None = None,
    *,
    in_axes: Any = 0,
    out_axes: Any = 0,
    static_broadcasted_argnums: int | Iterable[int] = (),
    devices: Sequence[Any] | None = None,
    backend: str | None = None,
    axis_size: int | None = None,
    donate_argnums: int | Iterable[int] = (),
    signature: SignatureLike | None = None,
) -> Pmapped[P, R]: ...


@overload
def pmap(
    fun: None = None,
    axis_name: Hashable | None = None,
    *,
    in_axes: Any = 0,
    out_axes: Any = 0,
    static_broadcasted_argnums: int | Iterable[int] = (),
    devices: Sequence[Any] | None = None,
    backend: str | None = None,
    axis_size: int | None = None,
    donate_argnums: int | Iterable[int] = (),
    signature: SignatureLike | None = None,
) -> Callable[[Callable[P, R]], Pmapped[P, R]]: ...


@traceback_boundary
@refusing_misspelled_options
def pmap(
    fun: Callable[P, R] | None = None,
    axis_name: Hashable | None = None,
    *,
    in_axes: Any = 0,
    out_axes: Any = 0,
    static_broadcasted_argnums: int | Iterable[int] = (),
    devices: Sequence[Any] | None = None,
    backend: str | None = None,
    axis_size: int | None = None,
    donate_argnums: int | Iterable[int] = (),
    signature: SignatureLike | None = None,
) -> Pmapped[P, R] | Callable[[Callable[P, R]], Pmapped[P, R]]:
    """Drop-in `jax.pmap` that predicts, checks and explains its axes.

    Same parameters, order and defaults as `jax.pmap`, plus `signature`. Predictions use
    the device count JAX would use (`devices`, else the devices of `backend`);
    `f.predict_with_devices(64, ...)` checks another machine's. Where JAX 0.10 answers
    silently and wrongly (negative in_axes/out_axes, `out_axes=None` on an output that
    depends on the mapped input), axischeck raises instead.

    ```python
    >>> f = ax.pmap(lambda x: jax.lax.psum(x, "i"), axis_name="i")
    >>> f.predict((1, 3)).shapes                   # any machine has one device
    Shape(1, 3)
    >>> f.predict_with_devices(64, (64, 3)).shapes  # a 64-device run, checked here
    Shape(64, 3)
    ```
    """
    if checks_off():
        return unchecked(  # type: ignore[no-any-return]
            JAX_PMAP,
            fun,
            axis_name=axis_name,
            in_axes=in_axes,
            out_axes=out_axes,
            static_broadcasted_argnums=static_broadcasted_argnums,
            devices=devices,
            backend=backend,
            axis_size=axis_size,
            donate_argnums=donate_argnums,
        )
    options = PmapOptions(
        axis_name,
        in_axes,
        out_axes,
        static_broadcasted_argnums,
        devices,
        backend,
        axis_size,
        donate_argnums,
    )
    if fun is None:

        def decorate(f: Callable[P, R]) -> Pmapped[P, R]:
            return Pmapped(f, options, signature)

        return decorate
    return Pmapped(fun, options, signature)
