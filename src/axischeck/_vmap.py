"""`axischeck.vmap`: `jax.vmap` with a per-example signature, prediction and checks."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar, ParamSpec, TypeVar, overload

from ._core._axes import check_axis_name, check_axis_size, check_flag, check_hashable, freeze_in_axes, freeze_out_axes
from ._core._errors import SpecError
from ._core._jax_compat import JAX_VMAP, traceback_boundary
from ._core._trees import flat_axes
from ._engine._function import parameters_of
from ._engine._levels import MapLevel
from ._engine._signature import Signature, SignatureLike
from ._engine._transform_models import level_models
from ._options import Options, Shown, custom_axes, refuse_cyclic_axes, refusing_misspelled_options, typed_key
from ._switch import checks_off, unchecked
from ._transform import Transformed, described

P = ParamSpec("P")
R = TypeVar("R")


@dataclass(frozen=True, slots=True)
class VmapOptions(Options[MapLevel | None]):
    """`jax.vmap`'s options, as given (see `vmap`): a transform's `options`, frozen.

    ```python
    >>> f = ax.vmap(jnp.dot, in_axes=(0, None))
    >>> f.options
    VmapOptions(in_axes=(0, None), out_axes=0, axis_name=None, axis_size=None, spmd_axis_name=None, sum_match=False)
    >>> ax.vmap(jnp.dot, **f.options.as_kwargs()).predict((8, 3), (3,)).shapes
    Shape(8)
    ```

    Validated into a `MapLevel`, or None for spec types axischeck cannot model (JAX
    then answers).
    """

    in_axes: Any = 0
    out_axes: Any = 0
    axis_name: Hashable | None = None
    axis_size: int | None = None
    spmd_axis_name: Any = None
    sum_match: bool = False
    # Facts every construction reads, more than once: found once, when the options are made.
    _flat: bool = field(init=False, repr=False, compare=False)
    """Whether in_axes and out_axes are flat ints and None (nothing to walk)."""
    jax_refuses_every_mistake: bool = field(init=False, repr=False, compare=False)
    """Flat axes and JAX's defaults for the rest: no axis name, so no collective JAX could
    answer silently."""

    kind: ClassVar[str] = "vmap"

    def __post_init__(self) -> None:
        flat = flat_axes(self.in_axes) and flat_axes(self.out_axes)
        defaults = (
            self.axis_name is None
            and self.axis_size is None
            and self.spmd_axis_name is None
            and self.sum_match is False
        )
        object.__setattr__(self, "_flat", flat)
        object.__setattr__(self, "jax_refuses_every_mistake", flat and defaults)
        if not flat:
            refuse_cyclic_axes(self.in_axes, self.out_axes, "vmap")

    @property
    def defers_to_jax(self) -> bool:
        return not self._flat and custom_axes(self.in_axes, self.out_axes)

    @property
    def rides_jax_trace(self) -> bool:
        """A collective over the named axis may be answered silently and wrongly: the
        check reads JAX's own trace of the call (see `_in_trace`)."""
        return self.axis_name is not None

    @property
    def may_hold_containers(self) -> bool:
        """Flat options hold no list or dict (see `Options.as_built`)."""
        return not self._flat

    def key(self) -> Hashable:
        if self.jax_refuses_every_mistake:
            # Flat ints and None, JAX's defaults for the rest: the axes as they are are the
            # key (values of these types are equal exactly when they mean the same: an int
            # never equals None, and flat axes take no bool). Such a key never equals a
            # `typed_key`, whose second item is a tuple of types.
            return ("vmap", self.in_axes, self.out_axes)
        return typed_key("vmap", *self.as_kwargs().values())

    def validate(self) -> MapLevel | None:
        if self.defers_to_jax:
            return None
        in_axes = freeze_in_axes(self.in_axes)
        out_axes = freeze_out_axes(self.out_axes)
        size = check_axis_size(self.axis_size)
        check_axis_name(self.axis_name)
        spmd = self.spmd_axis_name
        check_hashable(spmd, "vmap spmd_axis_name")  # a str or a tuple of them
        sum_match = check_flag(self.sum_match, "vmap sum_match")
        spmd_names = frozenset(spmd if isinstance(spmd, tuple) else () if spmd is None else (spmd,))
        return MapLevel(in_axes, out_axes, size, self.axis_name, sum_match, spmd=spmd_names)

    models = staticmethod(level_models)

    def explain_refusal(self, fun: Callable[..., Any]) -> None:
        try:
            Options.explain_refusal(self, fun)  # (a slotted dataclass: no bare super())
        except SpecError as err:
            raise _named_dict_fix(err, self.in_axes, fun) from None

    def jax_transform(self, fun: Callable[..., Any]) -> Callable[..., Any]:
        if self.jax_refuses_every_mistake:  # JAX's defaults, left out: its construction is cheaper without them
            return JAX_VMAP(fun, self.in_axes, self.out_axes)
        return JAX_VMAP(fun, *self.as_kwargs().values())


def _named_dict_fix(err: SpecError, in_axes: object, fun: Callable[..., Any]) -> SpecError:
    """jax#18548: a dict given as in_axes for a function of one positional parameter
    was meant for that parameter; the fix names it."""
    found = parameters_of(fun) if isinstance(in_axes, dict) else None
    if found is None or len(found[0]) != 1 or found[1] is not None:
        return err
    fix = (
        f"in_axes is matched to the positional arguments: in_axes=({in_axes!r},) gives the axes"
        f" inside {found[0][0]}, the dict argument"
    )
    return SpecError(err.problem, transform=err.transform, notes=err.notes, hint=fix)


class Vmapped(Transformed[P, R]):
    """A function wrapped by `axischeck.vmap` (see `vmap`): call it like the function,
    or ask it first. It keeps the options it was given (`in_axes`, `out_axes`,
    `axis_name`, `axis_size`), the per-example `signature` and the `batched_signature`.

    ```python
    >>> f = ax.vmap(jnp.dot, in_axes=(0, None), signature="(n),(n)->()")
    >>> f.in_axes, str(f.signature), str(f.batched_signature)
    ((0, None), '(n), (n) -> ()', '(B, n), (n) -> (B)')
    >>> f.predict((8, 3), (3,)).shapes
    Shape(8)
    >>> f(jnp.ones((8, 3)), jnp.ones(3)).shape
    (8,)
    ```
    """

    in_axes: Shown[Any] = Shown()
    out_axes: Shown[Any] = Shown()
    axis_name: Shown[Hashable | None] = Shown()
    axis_size: Shown[int | None] = Shown()

    def _remake(self) -> tuple[Callable[..., Any], dict[str, Any]]:
        return vmap, {**self.options.as_kwargs(), "signature": self._declared}

    def _describe(self) -> str:
        return described(self)


def _axes_from_batched(sig: Signature, options: VmapOptions) -> tuple[VmapOptions, Signature]:
    """in_axes/out_axes from a `Signature.batched`: derived when left at their defaults,
    otherwise they must say the same thing (whatever the sizes); and the per-example
    signature it batches."""
    in_axes, out_axes = options.in_axes, options.out_axes
    core = Signature._make(sig.core)
    if len(sig.levels) != 1:
        raise SpecError("signature= takes a per-example signature, or one Signature.batched(...)")
    level = sig.levels[0]
    want_in, want_out = level.in_axes.value, level.out_axes.value
    if type(in_axes) is int and type(out_axes) is int and in_axes == 0 and out_axes == 0:
        return replace(options, in_axes=want_in, out_axes=want_out), core  # the defaults: derive
    n = len(want_in)
    given_in = tuple(in_axes) if isinstance(in_axes, (tuple, list)) else (in_axes,) * n
    given_out = out_axes
    if isinstance(want_out, tuple) and not isinstance(out_axes, (tuple, list)):
        given_out = (out_axes,) * len(want_out)
    if given_in != want_in or given_out != want_out:
        raise SpecError(
            f"in_axes={in_axes!r}, out_axes={out_axes!r} contradict the batched signature"
            f" {sig.core} over {level.symbol!r}, which puts {level.symbol!r} at in_axes={want_in!r},"
            f" out_axes={want_out!r}",
            hint=f"pass in_axes={want_in!r}, out_axes={want_out!r}, or leave both out to derive them",
        )
    return options, core


@overload
def vmap(
    fun: Callable[P, R],
    in_axes: Any = 0,
    out_axes: Any = 0,
    axis_name: Hashable | None = None,
    axis_size: int | None = None,
    spmd_axis_name: Hashable | tuple[Hashable, ...] | None = None,
    sum_match: bool = False,
    *,
    signature: SignatureLike | None = None,
) -> Vmapped[P, R]: ...


@overload
def vmap(
    fun: None = None,
    in_axes: Any = 0,
    out_axes: Any = 0,
    axis_name: Hashable | None = None,
    axis_size: int | None = None,
    spmd_axis_name: Hashable | tuple[Hashable, ...] | None = None,
    sum_match: bool = False,
    *,
    signature: SignatureLike | None = None,
) -> Callable[[Callable[P, R]], Vmapped[P, R]]: ...


@traceback_boundary
@refusing_misspelled_options
def vmap(
    fun: Callable[P, R] | None = None,
    in_axes: Any = 0,
    out_axes: Any = 0,
    axis_name: Hashable | None = None,
    axis_size: int | None = None,
    spmd_axis_name: Hashable | tuple[Hashable, ...] | None = None,
    sum_match: bool = False,
    *,
    signature: SignatureLike | None = None,
) -> Vmapped[P, R] | Callable[[Callable[P, R]], Vmapped[P, R]]:
    """Drop-in `jax.vmap` that predicts, checks and explains its axes.

    Same parameters, order and defaults as `jax.vmap`, plus `signature`: the
    per-example shapes (`"(a,b),(b,c)->(a,c)"`, `"a b, b c -> a c"`, a tuple or dict
    of dim-string pytrees, or a `Signature`). Without it, `Annotated[Array, "a b"]`
    (or jaxtyping) annotations are read; without those, the per-example output is
    found by `jax.eval_shape` of the unbatched function.

    ```python
    >>> f = ax.vmap(lambda x, y, z: jnp.einsum("ab,bc->ac", x, y) + z,
    ...             in_axes=(0, 1, 0), signature="(a,b),(b,c),(a,c)->(a,c)")
    >>> f.predict((16, 8, 4), (4, 16, 2), (16, 8, 2)).shapes
    Shape(16, 8, 2)
    ```

    Usable as `ax.vmap(f, ...)`, `@ax.vmap` and `@ax.vmap(in_axes=...)`:

    ```python
    >>> from typing import Annotated
    >>> @ax.vmap(in_axes=(0, None))
    ... def project(x: Annotated[jax.Array, "i"], w: Annotated[jax.Array, "i o"]) -> Annotated[jax.Array, "o"]:
    ...     return x @ w
    >>> project.predict((32, 5), (5, 3)).shapes
    Shape(32, 3)
    >>> try:
    ...     project.predict((32, 5), (4, 3))
    ... except ax.ArgumentError as err:
    ...     print(str(err).splitlines()[0])
    vmap(project, in_axes=(0, None), out_axes=0): dimension 'i' disagrees: 5 from x, 4 from w
    ```
    """
    if checks_off():
        return unchecked(  # type: ignore[no-any-return]
            JAX_VMAP,
            fun,
            in_axes=in_axes,
            out_axes=out_axes,
            axis_name=axis_name,
            axis_size=axis_size,
            spmd_axis_name=spmd_axis_name,
            sum_match=sum_match,
        )
    options = VmapOptions(in_axes, out_axes, axis_name, axis_size, spmd_axis_name, sum_match)
    if isinstance(signature, Signature) and signature.levels:  # a `Signature.batched`: its axes
        options, signature = _axes_from_batched(signature, options)
    if fun is None:

        def decorate(f: Callable[P, R]) -> Vmapped[P, R]:
            return Vmapped(f, options, signature)

        return decorate
    return Vmapped(fun, options, signature)
