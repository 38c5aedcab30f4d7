"""`axischeck.check`: signature checks for a function that is not mapped."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any, ClassVar, ParamSpec, TypeVar, overload

from ._core._errors import SpecError
from ._core._jax_compat import traceback_boundary
from ._engine._function import fn_name
from ._engine._signature import Signature, SignatureLike
from ._engine._transform_models import Models, inner_model
from ._options import Options, require_callable
from ._switch import checks_off, unchecked
from ._transform import Transformed

P = ParamSpec("P")
R = TypeVar("R")


@dataclass(frozen=True, slots=True)
class CheckOptions(Options[None]):
    """`check` has no options of its own: the signature says everything."""

    kind: ClassVar[str] = "check"
    maps: ClassVar[bool] = False

    def key(self) -> Hashable:
        return ("check",)

    def validate(self) -> None:
        return None

    @staticmethod
    def models(meaning: None, fun: Callable[..., Any], held: Callable[..., Any], signature: Signature | None) -> Models:
        name = fn_name(fun)
        model, sig, _ = inner_model(fun, held, signature, name)
        if sig is None:
            raise SpecError(
                f"check({name}) needs shapes to check: pass signature=... or annotate the"
                " parameters with Annotated[Array, 'a b']"
            )
        return Models(model, None, sig, sig)

    def jax_transform(self, fun: Callable[..., Any]) -> Callable[..., Any]:
        require_callable(fun, self.kind)  # as JAX's transforms refuse what is not a function
        return fun  # nothing to map: the function itself runs


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
        super().__init__(fun, CheckOptions(), signature)
        self._predictor.models  # noqa: B018 - a check needs shapes (and a signature to fit): said now

    def _remake(self) -> tuple[Callable[..., Any], dict[str, Any]]:
        return check, {"signature": self._declared}

    def _describe(self) -> str:
        return f"check({fn_name(self.__wrapped__)}, signature={self.signature})"


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
