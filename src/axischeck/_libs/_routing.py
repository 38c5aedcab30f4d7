"""JAX's transforms as a library calls them: axischeck's while axischeck's wrapper of that
library's transform runs it (`routing()`), JAX's own otherwise.

Equinox's `filter_vmap` and Flax NNX's `vmap` do their work with `jax.vmap` and `jax.pmap`
of a function of their own, which is where a call's random draws can be read (see
`axischeck._draws`). `axischeck.patch()` routes those names for everyone; without it,
`axischeck.eqx` and `axischeck.nnx` route them for their own calls only: the library
module's global `jax` is given a stand-in (`_JaxAsSeenBy`) that is the `jax` module for
every name but `vmap` and `pmap`, and those are axischeck's only inside `routing()` (a
context variable: other threads and other calls are JAX's). Nothing else of the library or
of JAX is touched, and nothing at all until a wrapper of that library is first used.
"""

from __future__ import annotations

import functools
import sys
import threading
import types
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import jax

from .._transform import Transformed

ROUTING: ContextVar[bool] = ContextVar("axischeck_routing", default=False)

_ROUTED = ("vmap", "pmap")
_LOCK = threading.Lock()


class _JaxAsSeenBy(types.ModuleType):
    """The `jax` module as a library module sees it once routed: the same module (every
    attribute read from it, so a later `axischeck.patch()` is seen too), but for
    `jax.vmap` and `jax.pmap` inside `routing()`, which are axischeck's."""

    def __getattr__(self, name: str) -> Any:
        if name in _ROUTED and ROUTING.get():
            import axischeck

            return functools.partial(_draws_only, getattr(axischeck, name))
        return getattr(jax, name)


def _draws_only(make: Any, *args: Any, **kwargs: Any) -> Any:
    """axischeck's transform, made by `make` as the library calls JAX's, checking only the
    random draws of its calls: the wrapper that routed it checks and explains the rest in
    the library's terms, and JAX's errors reach it as JAX's."""
    made = make(*args, **kwargs)
    if isinstance(made, Transformed):
        made.only_draws()
    return made


def route(module_name: str) -> None:
    """Give the library module `module_name` (imported) the routed `jax` (once)."""
    module = sys.modules.get(module_name)
    if module is None or type(vars(module).get("jax")) is _JaxAsSeenBy:
        return
    with _LOCK:
        if vars(module).get("jax") is jax:
            vars(module)["jax"] = _JaxAsSeenBy("jax")


@contextmanager
def routing() -> Iterator[None]:
    """Inside: the routed library modules call axischeck's `vmap` and `pmap`."""
    token = ROUTING.set(True)
    try:
        yield
    finally:
        ROUTING.reset(token)
