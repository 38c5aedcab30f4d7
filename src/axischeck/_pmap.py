"""`axischeck.pmap`: `jax.pmap` with a per-example signature, prediction and checks."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import replace
from typing import Any, ParamSpec, TypeVar, overload

import jax

from ._core._axes import check_axis_name, check_axis_size, freeze_out_axes, freeze_pmap_in_axes
from ._core._errors import AxisCheckError, SpecError
from ._core._jax_compat import JAX_PMAP, traceback_boundary
from ._core._leaves import shapes_as_structs
from ._core._prediction import Prediction
from ._core._text import short_repr
from ._engine._levels import MapLevel
from ._engine._models import MapModel
from ._engine._predictor import Build, Predictor, mapped_models, options_key, predictor_for
from ._engine._signature import SignatureLike, fresh_symbol, parsed_signature
from ._in_trace import Recorder
from ._switch import checks_off, unchecked
from ._transform import Transformed, built_by_jax, checked_at_decoration, custom_axes, described, require_callable
from ._vmap import _before_jax, _defer

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


def _device_count(devices: Sequence[Any] | None, backend: str | None) -> int:
    """The devices JAX's pmap would use: `devices`, else every device of `backend`."""
    if devices is not None:
        if not isinstance(devices, (list, tuple)) or not all(isinstance(d, jax.Device) for d in devices):
            raise SpecError(
                f"pmap devices must be a list of jax devices (e.g. jax.devices()[:4]), got {short_repr(devices)}"
            )
        if len(devices) == 0:
            raise SpecError("'devices' argument to pmap must be non-empty, or None")
        return len(devices)
    if backend is not None and not isinstance(backend, str):
        raise SpecError(f"pmap backend must be a platform name such as 'cpu', got {short_repr(backend)}")
    try:
        return len(jax.devices(backend))
    except RuntimeError as err:
        raise SpecError(f"pmap backend {backend!r} is not available: {err}") from None


def _unmaps_an_output(out_axes: Any) -> bool:
    """Whether some output of a pmap with these out_axes is taken unmapped (None)."""
    leaves = jax.tree_util.tree_leaves(out_axes, is_leaf=lambda x: x is None)
    return any(leaf is None for leaf in leaves)


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

    def __init__(
        self,
        fun: Callable[P, R],
        axis_name: Hashable | None,
        in_axes: Any,
        out_axes: Any,
        static_broadcasted_argnums: int | Iterable[int],
        devices: Sequence[Any] | None,
        backend: str | None,
        axis_size: int | None,
        donate_argnums: int | Iterable[int],
        signature: SignatureLike | None,
    ) -> None:
        require_callable(fun, "pmap")
        options = {
            "axis_name": axis_name,
            "in_axes": in_axes,
            "out_axes": out_axes,
            "static_broadcasted_argnums": static_broadcasted_argnums,
            "devices": devices,
            "backend": backend,
            "axis_size": axis_size,
            "donate_argnums": donate_argnums,
        }

        def prepare() -> Build:
            frozen_in = freeze_pmap_in_axes(in_axes)
            frozen_out = freeze_out_axes(out_axes, "pmap")
            size = check_axis_size(axis_size, "pmap")
            check_axis_name(axis_name, "pmap axis_name")
            static = _argnums(static_broadcasted_argnums, "static_broadcasted_argnums")
            _argnums(donate_argnums, "donate_argnums")
            count = _device_count(devices, backend)
            sig = parsed_signature(signature)
            # JAX ignores negative static argnums (the argument is then dynamic).
            statics = tuple(sorted(n for n in static if n >= 0))

            def level(name: str, taken: frozenset[str]) -> MapLevel:
                symbol = fresh_symbol(taken, axis_name)
                return MapLevel(frozen_in, frozen_out, size, axis_name, False, name, symbol, "pmap", count, statics)

            return lambda f, held: mapped_models(f, held, sig, level)

        _before_jax(in_axes, out_axes, "pmap")
        signature = parsed_signature(signature)  # a pytree of dims is checked before anything flattens it
        # A None in out_axes takes device 0's block of that output: whether it varies over
        # the devices is read from JAX's own trace of the call (see `_in_trace`).
        recorder = Recorder(fun, "pmap") if _unmaps_an_output(out_axes) and not isinstance(fun, Transformed) else None
        jax_fn = built_by_jax(lambda: JAX_PMAP(recorder or fun, **options), prepare)
        defers = custom_axes(in_axes, out_axes)
        self._key = options_key("pmap", *options.values(), signature)
        self._build = checked_at_decoration(fun, self._key, _defer if defers else prepare, signature)
        self._options = options
        self._declared = signature
        self.axis_name = axis_name
        self.in_axes = in_axes
        self.out_axes = out_axes
        super().__init__(fun, jax_fn, defers_to_jax=defers, recorder=recorder)

    def _find_predictor(self) -> Predictor:
        build = self._build
        return predictor_for(self.__wrapped__, self._key, lambda: build)

    def _remake(self) -> tuple[Callable[..., Any], dict[str, Any]]:
        return pmap, {**self._options, "signature": self._declared}

    def _describe(self) -> str:
        return described(self)

    @traceback_boundary
    def predict_with_devices(self, devices: int, *args: Any, **kwargs: Any) -> Prediction:
        """`predict` for a machine with `devices` devices (check a 64-device run on a laptop)."""
        if type(devices) is not int or devices < 1:
            raise SpecError(f"predict_with_devices needs a device count >= 1, got {short_repr(devices)}")
        model = self.model
        assert isinstance(model, MapModel)
        model = replace(model, level=replace(model.level, devices=devices))
        args, kwargs = shapes_as_structs(args, kwargs, self._predictor.tuple_dtypes)
        try:
            return self._predictor.full(args, kwargs, model)
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
    if fun is None:

        def decorate(f: Callable[P, R]) -> Pmapped[P, R]:
            return Pmapped(
                f,
                axis_name,
                in_axes,
                out_axes,
                static_broadcasted_argnums,
                devices,
                backend,
                axis_size,
                donate_argnums,
                signature,
            )

        return decorate
    return Pmapped(
        fun,
        axis_name,
        in_axes,
        out_axes,
        static_broadcasted_argnums,
        devices,
        backend,
        axis_size,
        donate_argnums,
        signature,
    )
