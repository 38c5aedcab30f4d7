"""`axischeck.check`: signature checks for a function that is not mapped."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any, ParamSpec, TypeVar, overload

from ._core._errors import SpecError
from ._core._jax_compat import traceback_boundary
from ._engine._predictor import Build, Models, Predictor, fn_name, inner_model, options_key, predictor_for
from ._engine._signature import Signature, SignatureLike, parsed_signature
from ._switch import checks_off, unchecked
from ._transform import Transformed

P = ParamSpec("P")
R = TypeVar("R")


class Checked(Transformed[P, R]):
    """A function wrapped by `axischeck.check` (see `check`): calls are checked against
    its `signature`, and `predict` answers without running it.

    ```python
    >>> forward = ax.check(lambda X, W: X @ W, signature="n f, f o -> n o")
    >>> str(forward.signature), forward.predict((32, 20), (20, 1)).shapes
    ('(n, f), (f, o) -> (n, o)', Shape(32, 1))
    ```
    """

    def __init__(self, fun: Callable[P, R], signature: SignatureLike | None) -> None:
        if not callable(fun):
            raise SpecError(f"check needs a callable, got {type(fun).__name__}: {fun!r}")

        signature = parsed_signature(signature)  # a pytree of dims is checked before anything flattens it
        self._key = options_key("check", signature)
        self._declared = signature
        found = _checked_predictor(fun, self._key, signature)
        found.models  # noqa: B018 - a check needs shapes (and a signature to fit): say so now
        super().__init__(fun, fun, shared=found)

    def _find_predictor(self) -> Predictor:
        return _checked_predictor(self.__wrapped__, self._key, self._declared)

    def _remake(self) -> tuple[Callable[..., Any], dict[str, Any]]:
        return check, {"signature": self._declared}

    def _describe(self) -> str:
        return f"check({fn_name(self.__wrapped__)}, signature={self.signature})"


def _checked_predictor(fun: Callable[..., Any], key: Hashable, signature: Signature | None) -> Predictor:
    """The predictor shared by the checks of `fun` with this signature."""

    def prepare() -> Build:
        return lambda f, held: _checked_models(f, held, signature)

    return predictor_for(fun, key, prepare)


def _checked_models(fun: Callable[..., Any], held: Callable[..., Any], signature: Signature | None) -> Models:
    name = fn_name(fun)
    model, sig, _ = inner_model(fun, held, signature, name)
    if sig is None:
        raise SpecError(
            f"check({name}) needs shapes to check: pass signature=... or annotate the"
            " parameters with Annotated[Array, 'a b']"
        )
    return Models(model, None, sig, sig)


@overload
def check(fun: Callable[P, R], *, signature: SignatureLike | None = None) -> Checked[P, R]: ...


@overload
def check(fun: None = None, *, signature: SignatureLike | None = None) -> Callable[[Callable[P, R]], Checked[P, R]]: ...


@traceback_boundary
def check(
    fun: Callable[P, R] | None = None, *, signature: SignatureLike | None = None
) -> Checked[P, R] | Callable[[Callable[P, R]], Checked[P, R]]:
    """Check a plain (unmapped) function's arguments and outputs against a signature.

    The identity transform of the signature algebra: catches shape bugs that JAX
    broadcasting hides, like a `(32, 1)` prediction meant to be `(32,)`.

    ```python
    >>> forward = ax.check(lambda X, W: X @ W, signature="n f, f o -> n")
    >>> try:
    ...     forward(jnp.ones((32, 20)), jnp.ones((20, 1)))
    ... except ax.OutputError as err:   # doctest: +ELLIPSIS
    ...     print(str(err).splitlines()[0])
    check(<lambda>, ...): the function's output contradicts its signature: ...
    ```
    """
    if checks_off():
        return unchecked(lambda f: f, fun)  # type: ignore[no-any-return]  # nothing to map: the function itself
    if fun is None:

        def decorate(f: Callable[P, R]) -> Checked[P, R]:
            return Checked(f, signature)

        return decorate
    return Checked(fun, signature)
