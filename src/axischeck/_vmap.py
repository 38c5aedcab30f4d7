"""`axischeck.vmap`: `jax.vmap` with a per-example signature, prediction and checks."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any, ParamSpec, TypeVar, overload

from ._core._axes import check_axis_name, check_axis_size, check_flag, check_hashable, freeze_in_axes, freeze_out_axes
from ._core._errors import SpecError
from ._core._jax_compat import JAX_VMAP, traceback_boundary
from ._core._leaves import plain_function
from ._core._trees import check_nesting, flat_axes
from ._engine._levels import MapLevel
from ._engine._predictor import (
    PREDICTORS,
    Build,
    Predictor,
    declared_core,
    mapped_models,
    options_key,
    predictor_for,
)
from ._engine._signature import Signature, SignatureLike, fresh_symbol, parsed_signature
from ._switch import checks_off, unchecked
from ._transform import (
    Transformed,
    checked_at_decoration,
    custom_axes,
    described,
    explain_refusal,
    require_callable,
)

P = ParamSpec("P")
R = TypeVar("R")


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

    def __init__(
        self,
        fun: Callable[P, R],
        in_axes: Any,
        out_axes: Any,
        axis_name: Hashable | None,
        axis_size: int | None,
        spmd_axis_name: Any,
        sum_match: bool,
        signature: SignatureLike | None,
    ) -> None:
        require_callable(fun, "vmap")
        if isinstance(signature, Signature) and signature.levels:
            in_axes, out_axes = _axes_from_batched(signature, in_axes, out_axes)
            signature = Signature._make(signature.core)
        plain = flat_axes(in_axes) and flat_axes(out_axes)  # ints and None, flat: nothing to walk
        if not plain:
            _before_jax(in_axes, out_axes, "vmap")
        # The common case: the other options are JAX's defaults, which are left out of
        # JAX's call (its construction is cheaper without them) and of the options key.
        unnamed = axis_name is None and axis_size is None and spmd_axis_name is None and sum_match is False
        common = plain and unnamed
        # A pytree of dims is checked before anything flattens it. Text, in the common case,
        # is parsed below only if no predictor of the function and options has parsed it.
        declared = signature if common and type(signature) is str else parsed_signature(signature)
        # The options as given, for what is derived from them later: the public attributes
        # below only show them (assigning one changes nothing, as before).
        self._options = (in_axes, out_axes, axis_name, axis_size, spmd_axis_name, sum_match)
        self._declared = declared  # text, if given so in the common case: `_prepare` parses it
        self.in_axes = in_axes
        self.out_axes = out_axes
        self.axis_name = axis_name
        self.axis_size = axis_size
        try:  # JAX's own transform: its construction errors are JAX's, explained where we can
            if unnamed:
                jax_fn = JAX_VMAP(fun, in_axes, out_axes)
            else:
                jax_fn = JAX_VMAP(fun, in_axes, out_axes, axis_name, axis_size, spmd_axis_name, sum_match)
        except Exception as jax_err:
            explain_refusal(jax_err, self._prepare)
            raise
        defers = not plain and custom_axes(in_axes, out_axes)
        shared: Predictor | None = None
        self._build: Build | None
        self._key: Hashable
        if common:
            # Flat ints and None (immutable), JAX's defaults for the rest: JAX has validated
            # them as axischeck would, so what they mean is derived at first use, like the
            # predictor: a transform written inline costs JAX's construction and little more.
            # The options as they are are the key: values of these types are equal exactly
            # when they mean the same, whatever their types (an int never equals None, and
            # flat axes take no bool), and such a key never equals an `options_key` key,
            # whose second item is a tuple of types. A signature written as text is keyed
            # by its text, which means one signature and hashes in C (a `Signature`'s hash
            # is a Python method's).
            self._key = key = ("vmap", in_axes, out_axes, declared)
            self._build = None
            if declared is not None:
                # Written inline, a transform finds here the predictor its function and
                # options share, if one of them has made it: its calls find nothing again,
                # and the signature was parsed and fitted to the function (this code) when
                # it was made.
                shared = PREDICTORS.get(fun, key)
                if shared is None:
                    declared_core(fun, parsed_signature(declared))
        else:
            # Anything else is validated now, and what it means is kept: a list given as
            # in_axes may be changed after this (JAX copies it too).
            self._key = options_key(
                "vmap", in_axes, out_axes, axis_name, axis_size, spmd_axis_name, sum_match, declared
            )
            parsed = parsed_signature(declared)  # `declared` itself: only the common case keeps text
            self._build = checked_at_decoration(fun, self._key, _defer if defers else self._prepare, parsed)
        # Whether a call has nothing to check before JAX runs: a plain function without a
        # signature, whose annotations declare no dims. Without any annotations that is
        # known now; with some, they are read at the first call (None), as the models read
        # them: a string annotation may name what is defined after this.
        straight: bool | None = False
        if common and declared is None and plain_function(fun):
            try:
                straight = None if fun.__annotations__ else True
            except Exception:  # annotations not evaluable yet (Python 3.14 defers them)
                straight = None
        super().__init__(fun, jax_fn, defers_to_jax=defers, straight=straight, shared=shared)

    def _prepare(self) -> Build:
        """What the options mean (validated; see `prepared`): it holds no function."""
        return _mapped(*self._options, parsed_signature(self._declared))

    def _find_predictor(self) -> Predictor:
        build = self._build
        return predictor_for(self.__wrapped__, self._key, self._prepare if build is None else lambda: build)

    def _remake(self) -> tuple[Callable[..., Any], dict[str, Any]]:
        in_axes, out_axes, axis_name, axis_size, spmd_axis_name, sum_match = self._options
        return vmap, {
            "in_axes": in_axes,
            "out_axes": out_axes,
            "axis_name": axis_name,
            "axis_size": axis_size,
            "spmd_axis_name": spmd_axis_name,
            "sum_match": sum_match,
            "signature": self._declared,
        }

    def _describe(self) -> str:
        return described(self)


def _mapped(
    in_axes: Any,
    out_axes: Any,
    axis_name: Hashable | None,
    axis_size: int | None,
    spmd_axis_name: Any,
    sum_match: bool,
    signature: Signature | None,
) -> Build:
    """vmap's options validated, and how they build the models of a function."""
    frozen_in = freeze_in_axes(in_axes)
    frozen_out = freeze_out_axes(out_axes)
    size = check_axis_size(axis_size)
    check_axis_name(axis_name)
    check_hashable(spmd_axis_name, "vmap spmd_axis_name")  # a str or a tuple of them
    match = check_flag(sum_match, "vmap sum_match")
    spmd = frozenset(
        spmd_axis_name if isinstance(spmd_axis_name, tuple) else () if spmd_axis_name is None else (spmd_axis_name,)
    )

    def level(name: str, taken: frozenset[str]) -> MapLevel:
        symbol = fresh_symbol(taken, axis_name)
        return MapLevel(frozen_in, frozen_out, size, axis_name, match, name, symbol, spmd=spmd)

    return lambda f, held: mapped_models(f, held, signature, level)


def _axes_from_batched(sig: Signature, in_axes: Any, out_axes: Any) -> tuple[Any, Any]:
    """in_axes/out_axes from a `Signature.batched`: derived when left at their defaults,
    otherwise they must say the same thing (whatever the sizes)."""
    if len(sig.levels) != 1:
        raise SpecError("signature= takes a per-example signature, or one Signature.batched(...)")
    level = sig.levels[0]
    want_in, want_out = level.in_axes.value, level.out_axes.value
    if type(in_axes) is int and type(out_axes) is int and in_axes == 0 and out_axes == 0:
        return want_in, want_out  # the defaults: derive
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
            fix=f"pass in_axes={want_in!r}, out_axes={want_out!r}, or leave both out to derive them",
        )
    return in_axes, out_axes


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
        options = {"in_axes": in_axes, "out_axes": out_axes, "axis_name": axis_name, "axis_size": axis_size}
        return unchecked(JAX_VMAP, fun, **options, spmd_axis_name=spmd_axis_name, sum_match=sum_match)  # type: ignore[no-any-return]
    if fun is None:

        def decorate(f: Callable[P, R]) -> Vmapped[P, R]:
            return Vmapped(f, in_axes, out_axes, axis_name, axis_size, spmd_axis_name, sum_match, signature)

        return decorate
    return Vmapped(fun, in_axes, out_axes, axis_name, axis_size, spmd_axis_name, sum_match, signature)


def _defer() -> Build:
    """Options axischeck cannot model: the transform defers every answer to JAX."""

    def build(fun: Callable[..., Any], held: Callable[..., Any]) -> Any:
        from ._engine._models import TraceModel
        from ._engine._predictor import Models

        return Models(TraceModel(held), None, None, None)

    return build


def _before_jax(in_axes: Any, out_axes: Any, transform: str) -> None:
    """Cyclic or absurdly deep axes are refused before JAX's flatten recurses into them."""
    if not flat_axes(in_axes):
        check_nesting(in_axes, f"{transform} in_axes")
    if not flat_axes(out_axes):
        check_nesting(out_axes, f"{transform} out_axes")
