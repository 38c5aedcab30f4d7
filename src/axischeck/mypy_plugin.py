"""mypy plugin: `functools.partial(ax.vmap, ...)` keeps the decorated function's types.

Enable it in the mypy config:

```toml
[tool.mypy]
plugins = ["axischeck.mypy_plugin"]
```

`ax.vmap`, `ax.pmap`, `ax.shard_map`, `ax.smap` and `ax.check` are overloaded: the
function form and the `@ax.vmap(in_axes=...)` decorator-factory form. mypy's own
`functools.partial` support gives up on overloaded callees, so
`@partial(ax.vmap, in_axes=(0, None))` turns the decorated function into
`Vmapped[[*Any, **Any], Any]`. This plugin runs mypy's partial handling on each overload
instead, so the bound options are checked and the result keeps the function's parameters
and return type, as `@partial(jax.vmap, ...)` does. pyright needs no plugin.

Every other `partial(...)` goes to mypy's default handling, and so does everything when
mypy's internals have moved. This module imports only mypy (Python still runs
`axischeck/__init__.py` first, which imports jax).
"""

from __future__ import annotations

from collections.abc import Callable

from mypy.checker import TypeChecker
from mypy.nodes import ARG_OPT, ARG_POS, ARG_STAR, ARG_STAR2
from mypy.plugin import FunctionContext, Plugin
from mypy.plugins import functools as mypy_partial  # internals, not plugin API: see _MYPY_PARTIAL
from mypy.types import CallableType, Instance, Overloaded, Type, get_proper_type

# What the function-taking overload of `ax.vmap`, `ax.pmap`, `ax.shard_map`, `ax.smap` and
# `ax.check` returns. The overloads are recognised by it rather than by the callee's name:
# types survive mypy's cache, so `v = ax.vmap` in another module is recognised on warm
# runs too (an overload's `definition` is not kept in the cache).
_WRAPPERS = frozenset({"Vmapped", "Pmapped", "ShardMapped", "Smapped", "Checked"})
_PARTIAL_ATTR = "__mypy_partial"  # where mypy keeps the partially applied signature


def _transform_overloads(ctx: FunctionContext) -> Overloaded | None:
    """The overloads of the axischeck transform that `partial(func, ...)` binds, or None
    when `func` is anything else."""
    # partial(func, *args, **kwargs) with one func, as mypy's own handler requires.
    if not isinstance(ctx.api, TypeChecker) or len(ctx.args) != 3 or len(ctx.arg_types[0]) != 1:
        return None
    # `partial(ax.vmap, **options)`: mypy would map the unpacked options onto every
    # parameter, the function's too, and reject the later `(f)`; leave it untyped.
    if any(kind in (ARG_STAR, ARG_STAR2) for kinds in ctx.arg_kinds[1:] for kind in kinds):
        return None
    callee = get_proper_type(ctx.arg_types[0][0])
    if isinstance(callee, Overloaded) and any(_wraps(item) for item in callee.items):
        return callee
    return None


def _wraps(item: CallableType) -> bool:
    """`(fun: Callable[P, R], ...) -> Vmapped[P, R]` and the like."""
    ret = get_proper_type(item.ret_type)
    if not isinstance(ret, Instance) or not _takes_function(item):
        return False
    module, _, name = ret.type.fullname.rpartition(".")
    return module.split(".")[0] == "axischeck" and name in _WRAPPERS


def _partial_new(ctx: FunctionContext) -> Type:
    """`partial(ax.vmap, ...)`: mypy's partial handling, applied to each overload.

    The overloads the bound arguments fit stay overloads of the partial object (mypy
    keeps them in its `__mypy_partial` attribute and checks the later call against
    them), so `partial(ax.vmap, in_axes=0)(f)` is `Vmapped[P, R]` and
    `partial(ax.vmap, in_axes=0)()` is the decorator factory. When no overload fits,
    the errors are mypy's for the function-taking one (`axis_size="3"` is an arg-type).
    """
    overloads = _transform_overloads(ctx)
    if overloads is None:
        return mypy_partial.partial_new_callback(ctx)
    assert isinstance(ctx.api, TypeChecker)
    fitting: list[tuple[Instance, CallableType]] = []
    for item in overloads.items:
        with ctx.api.msg.filter_errors() as watcher:
            result = get_proper_type(mypy_partial.handle_partial_with_callee(ctx, callee=item))
        applied = _applied(result)
        if watcher.has_new_errors() or applied is None:
            continue
        assert isinstance(result, Instance)
        fitting.append((result, applied))
    if not fitting:
        function_form = next(item for item in overloads.items if _wraps(item))
        return mypy_partial.handle_partial_with_callee(ctx, callee=function_form)
    first, _ = fitting[0]
    if len(fitting) == 1:
        return first
    assert first.extra_attrs is not None  # _applied found the signature there
    extra = first.extra_attrs.copy()
    extra.attrs[_PARTIAL_ATTR] = Overloaded([applied for _, applied in fitting])
    combined = first.copy_modified()
    combined.extra_attrs = extra
    return combined


def _applied(result: Type) -> CallableType | None:
    """The partially applied signature mypy attached to a `partial[...]` result."""
    result = get_proper_type(result)
    if not isinstance(result, Instance) or result.extra_attrs is None:
        return None
    applied = get_proper_type(result.extra_attrs.attrs.get(_PARTIAL_ATTR))
    return applied if isinstance(applied, CallableType) else None


def _takes_function(item: CallableType) -> bool:
    return item.arg_kinds[:1] in ([ARG_POS], [ARG_OPT]) and isinstance(get_proper_type(item.arg_types[0]), CallableType)


# A mypy without these functions keeps `partial` to itself: no types gained, none broken.
_MYPY_PARTIAL = all(hasattr(mypy_partial, name) for name in ("partial_new_callback", "handle_partial_with_callee"))


class AxischeckPlugin(Plugin):
    def get_function_hook(self, fullname: str) -> Callable[[FunctionContext], Type] | None:
        # The first plugin with a hook wins, and mypy's default plugin comes last: this
        # hook replaces its `functools.partial` one and hands it every other call. The
        # `partial.__call__` hook stays mypy's, and applies to what this returns.
        if fullname == "functools.partial" and _MYPY_PARTIAL:
            return _partial_new
        return None


def plugin(version: str) -> type[Plugin]:
    return AxischeckPlugin
