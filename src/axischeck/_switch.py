"""The off switch: JAX's own transforms and no checks, for runs that want zero cost.

`AXISCHECK_DISABLE=1` in the environment (read when axischeck is first used) makes every
`ax.vmap`, `ax.pmap`, `ax.shard_map` and `ax.smap` JAX's own transform, `ax.check` the
function itself, and `ax.patch()` a no-op. `with ax.checks_disabled():` does the same for
a block: a transform made inside it is JAX's, and one made before runs JAX's transform
unchecked when called inside it (`predict` and `explain` still answer when asked).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

DISABLED_BY_ENVIRONMENT = os.environ.get("AXISCHECK_DISABLE", "").strip().lower() not in ("", "0", "false", "no")
"""Whether `AXISCHECK_DISABLE` was set (to anything but empty, 0, false or no) when
axischeck was first used."""

CHECKS_OFF: ContextVar[bool] = ContextVar("axischeck_checks_off", default=False)
"""True inside `checks_disabled()` (per thread and per task, as context variables are)."""


def checks_off() -> bool:
    """Whether transforms made now are JAX's own (the environment, or `checks_disabled`)."""
    return DISABLED_BY_ENVIRONMENT or CHECKS_OFF.get()


@contextmanager
def checks_disabled() -> Iterator[None]:
    """Run a block with axischeck's checks off: transforms made inside it are JAX's own,
    and transforms made before call JAX's transform directly, with no checks.

    ```python
    >>> with ax.checks_disabled():
    ...     f = ax.vmap(jnp.sin)
    >>> f is not None and not isinstance(f, ax.Vmapped)
    True
    ```
    """
    token = CHECKS_OFF.set(True)
    try:
        yield
    finally:
        CHECKS_OFF.reset(token)


@contextmanager
def made_checked() -> Iterator[None]:
    """For axischeck's own library wrappers: the transform that checks a call for them,
    made when they are asked (`predict`), is axischeck's even inside `checks_disabled()`,
    as the wrapper itself was made before it."""
    token = CHECKS_OFF.set(False)
    try:
        yield
    finally:
        CHECKS_OFF.reset(token)


def unchecked(make: Callable[..., Any], fun: Callable[..., Any] | None, /, **options: Any) -> Any:
    """JAX's transform `make` of `fun` with the options as given (a decorator when `fun`
    is None, as the drop-ins are used bare or called)."""
    if fun is None:
        return lambda f: make(f, **options)
    return make(fun, **options)
