"""Everything that depends on the JAX version, in one place (tested: jax 0.10.2 to 0.12.x).

axischeck mirrors JAX's semantics from its own rules (see docs/jax-semantics.md); only
these few facts are read from JAX itself. Each fact that changed between versions has a
name here, read from JAX's own configuration where JAX has a switch for it, else from
its version:

- `NEGATIVE_COLLECTIVE_AXES_FAIL_LOWERING`: before 0.11, psum_scatter and all_to_all
  with a negative axis trace (so `eval_shape` answers) but cannot be lowered.
- `ppermute_axes_in_mesh_order()`: from 0.11.1, a ppermute over several mesh axes named
  out of the mesh's order fails when lowered (`jax_raise_on_ppermute_sort_diff`).
- `DEFAULT_MESH_AXIS_TYPE`: an `AbstractMesh` built without `axis_types` has Auto axes
  before 0.11.1 and Explicit axes from then on.
- `equations(jaxpr)`: from 0.11 `ClosedJaxpr` and `Jaxpr` are one class (`.jaxpr` is a
  legacy accessor); both expose `.eqns`, `.invars` and `.outvars`, which is all
  axischeck reads. `scan_layout(params)`: a scan's constants and carries are counted
  by `num_consts`/`num_carry` before 0.12 and by `ft_in` from then on.
- `VMAP_MATCHES_CONTAINERS_BY_POSITION`: from 0.12.1, `jax.vmap` matches the containers
  of `in_axes`/`out_axes` to the arguments' and outputs' by their number of children
  (a tuple for a dict, a list for a tuple) before its strict prefix check; pmap does not.
- `INFER_SPECS`, `JAX_SMAP`: names JAX does not export everywhere.
- `tracing()`, `process_global_shape()`: JAX's own private functions (the same from 0.10.2
  to 0.12.1) for whether JAX is tracing, which decides where a pmap in a job of several
  processes runs, and for the global shape `jax.make_array_from_process_local_data` builds.
  The gloo CPU collectives such a job needs on one machine are in every release tested.
- `JitsKept`: a record of the user's function (the check that rides JAX's trace) keeps
  the jits it calls as calls, through JAX's staging rule of jit (the same private rule
  from 0.10.2 to 0.12.1): JAX inlines a jit marked to inline early (`inline=True` up to
  0.11, `Inline.JAX_EARLY` from then on; jax.numpy's reductions) into a staged jaxpr, but
  runs it eagerly as one compiled call, whose numerics can differ from its operations run
  one by one (on jax 0.12). Where the rule has moved, JAX runs the function itself.

Where axischeck must tell one JAX error from another by its wording (JAX raises a plain
ValueError for many things), the wording is read here and nowhere else, by the functions
at the end of this module; each names the JAX versions whose wording it was checked on.
"""

from __future__ import annotations

import functools
import inspect
import os
import re
import sys
from collections.abc import Callable
from contextlib import AbstractContextManager
from contextvars import ContextVar
from operator import attrgetter
from pathlib import Path
from types import CellType, CodeType
from typing import Any, TypeVar, cast

import jax
import jax.numpy as jnp
import numpy as np
from jax.core import Tracer

C = TypeVar("C", bound=Callable[..., Any])

JAX_VERSION: tuple[int, ...] = tuple(int(part) for part in jax.__version_info__[:3])
"""The installed JAX's (major, minor, patch)."""

from jax._src.interpreters import batching as _batching  # noqa: E402 - jax imports it anyway

JAX_VMAP = jax.vmap
JAX_PMAP = jax.pmap
JAX_SHARD_MAP = jax.shard_map
JAX_SMAP: Any = getattr(jax, "smap", None)
"""JAX's own transforms, captured when axischeck is imported: axischeck calls these, so
`axischeck.patch()` (which routes the public `jax.*` names through axischeck) never
makes axischeck call itself."""

try:  # jax's concrete array class; importing it costs nothing once jax is imported
    from jax._src.array import ArrayImpl as _ArrayImpl

    _array_impl: tuple[type, ...] = (_ArrayImpl,)
except ImportError:  # pragma: no cover - a future layout: the general path still works
    _array_impl = ()

TRUSTED_ARRAY_TYPES: frozenset[type] = frozenset({*_array_impl, jax.ShapeDtypeStruct})
"""Types whose `.shape` JAX guarantees to be a tuple of ints >= 0 with a valid dtype."""

CONCRETE_ARRAY_TYPES: frozenset[type] = frozenset(_array_impl)
"""JAX's concrete array class, whose `.shape` property returns its abstract value's shape
(0.10.2 to 0.12): the checked call reads `.aval.shape`, without the property's frame."""


_STRUCT_FIELDS = attrgetter(*jax.ShapeDtypeStruct.__slots__)
"""Every field of a `ShapeDtypeStruct` (its slots, whichever this JAX has): what JAX reads
to make its abstract value."""


def abstract_values(structs: list[Any]) -> list[Any]:
    """`structs`, each `ShapeDtypeStruct` replaced by JAX's abstract value of it
    (`jax.typeof`), made once per distinct struct: tracing, JAX makes a new one for every
    leaf, most of an `eval_shape` over thousands of leaves. Structs equal in every field
    have one abstract value (the configuration is the same within one call); anything
    else, and a struct whose fields cannot be hashed, is left for JAX to read."""
    made: dict[Any, Any] = {}
    out = []
    for x in structs:
        if type(x) is jax.ShapeDtypeStruct:
            try:
                fields = _STRUCT_FIELDS(x)
                aval = made.get(fields)
                if aval is None:
                    aval = made[fields] = jax.typeof(x)
                x = aval
            except (TypeError, AttributeError):  # unhashable, or a slot unset (unpickled from another JAX)
                pass
        out.append(x)
    return out


_NO_PARAMETERS = inspect.Signature()


def name_trace(traced: Callable[..., Any], shown: Callable[..., Any], arg_names: list[str], traced_for: str) -> None:
    """Have JAX name `shown` (the user's function, by its source line) and `arg_names` (one
    per argument of `traced`, the user's own paths) in what it says while tracing `traced`
    (`traced_for`: "jit" under `eval_shape`): an axischeck wrapper's line and `traced[0]`
    would be named otherwise. JAX reads this saved debug info (the hook its own wrappers
    use, 0.10.2 to 0.12) instead of naming the arguments itself, a walk of every leaf:
    a quarter of an `eval_shape` over thousands of leaves."""
    try:
        from jax._src import api_util

        info = api_util.debug_info(traced_for, shown, (), {}, signature=_NO_PARAMETERS)
        api_util.save_wrapped_fun_debug_info(traced, info._replace(arg_names=tuple(arg_names)))
    except Exception:  # a future layout: JAX names what it traces itself, as before
        pass


_ARRAY_TYPES: dict[type, bool] = {}


def array_type(kind: type) -> bool:
    """Whether JAX takes values of this type as arrays: jax and numpy arrays and scalars,
    tracers, `ShapeDtypeStruct`s (abstract arrays, for prediction), and `__jax_array__`
    objects where this JAX abstracts them. numpy's masked arrays are refused by JAX
    ("not supported as direct inputs to JAX functions")."""
    verdict = _ARRAY_TYPES.get(kind)
    if verdict is None:
        if issubclass(kind, np.ma.MaskedArray):
            verdict = False
        elif issubclass(kind, (np.ndarray, np.generic, jax.Array, jax.ShapeDtypeStruct, Tracer)):
            verdict = True
        else:
            verdict = hasattr(kind, "__jax_array__") and abstracts_jax_array()
        if len(_ARRAY_TYPES) < 4096:
            _ARRAY_TYPES[kind] = verdict
    return verdict


@functools.cache
def abstracts_jax_array() -> bool:
    """Whether this JAX traces an object by its `__jax_array__` (JAX 0.10 refuses it:
    "Triggering __jax_array__() during abstractification is no longer supported").
    Asked of JAX itself once, abstractly, the first time such an object is met."""

    class Probe:
        shape, dtype = (1,), np.dtype("float32")

        def __jax_array__(self) -> Any:
            return np.zeros((1,), np.float32)

    try:
        jax.eval_shape(lambda x: x, Probe())
    except (ValueError, TypeError):  # JAX's refusal (an accident like RecursionError is not cached)
        return False
    return True


def backend_initialized() -> bool:
    """Whether JAX has created its backends (after which XLA_FLAGS are no longer read)."""
    try:
        from jax._src import xla_bridge
    except ImportError:  # pragma: no cover - a future layout: assume the worst
        return True
    return bool(getattr(xla_bridge, "_backends", True))


def canonical_dtype(dtype: Any) -> Any:
    """The dtype JAX computes with (float64 -> float32 without x64); typed PRNG keys and
    other extended dtypes are kept as they are."""
    if jnp.issubdtype(dtype, jax.dtypes.extended):
        return dtype
    return jax.dtypes.canonicalize_dtype(dtype)


_VALID_DTYPES: dict[Any, bool] = {}


def valid_dtype(dtype: Any) -> bool:
    """Whether arrays of `dtype` are JAX values (str, object, datetime, void are not).

    Verdicts are cached; an accident (RecursionError, MemoryError, ...) propagates and is
    never remembered as a verdict.
    """
    try:
        return _VALID_DTYPES[dtype]
    except (KeyError, TypeError):  # new, or unhashable: decide below
        pass
    try:
        if jnp.issubdtype(dtype, jax.dtypes.extended):  # PRNG keys and friends
            verdict = True
        else:
            # JAX's own test, from its core: the public `jax.extend.core` imports Pallas,
            # whose configuration joins JAX's trace context (JAX 0.12), so importing it at
            # first use would change every cache key taken before it.
            from jax._src.core import valid_jaxtype

            verdict = bool(valid_jaxtype(np.zeros((), dtype)))
    except (TypeError, ValueError):
        verdict = False
    try:
        if len(_VALID_DTYPES) < 1024:
            _VALID_DTYPES[dtype] = verdict
    except TypeError:
        pass
    return verdict


INFER_SPECS: Any = inspect.signature(jax.shard_map).parameters["in_specs"].default
"""`jax.shard_map`'s default `in_specs` (`Infer`, not public in 0.10.2): take each argument's
own sharding, which only Explicit mesh axes have."""


def vmap_shmap_error_enabled() -> bool:
    """JAX refuses a vmap spmd_axis_name named by an inner shard_map, unless configured not to."""
    return not bool(getattr(jax.config, "jax_disable_vmap_shmap_error", False))


def size_one_axes_leave_types() -> bool:
    """`jax_remove_size_one_mesh_axis_from_type`: JAX drops mesh axes of size 1 from array
    types, so an argument's sharding never names them (an in_spec may)."""
    return bool(getattr(jax.config, "jax_remove_size_one_mesh_axis_from_type", False))


def spec_entries(spec: Any) -> tuple[Any, ...]:
    """A PartitionSpec's per-dim entries (iterating a spec with `unreduced=` raises)."""
    return tuple(spec.partitions)


def spec_axes(spec: Any) -> list[tuple[str, ...]]:
    """Each dim's mesh axes in a PartitionSpec (`None` -> `()`; anything not a spec has
    none)."""
    if not isinstance(spec, jax.sharding.PartitionSpec):
        return []
    return [() if e is None else (e,) if isinstance(e, str) else tuple(e) for e in spec_entries(spec)]


def type_sharding(x: Any) -> Any:
    """The sharding in `x`'s JAX type (an array, a struct, a tracer under jit), whose spec
    names only Explicit mesh axes. None for a value JAX does not type as an array."""
    try:
        aval = jax.typeof(x)  # a struct whose sharding cannot hold its shape raises ValueError
    except TypeError:  # not a JAX value (a str)
        return None
    return getattr(aval, "sharding", None)


def type_spec(x: Any) -> Any:
    """The PartitionSpec of `type_sharding(x)`, or None."""
    return getattr(type_sharding(x), "spec", None)


from jax._src.config import trace_context as _trace_context  # noqa: E402 - jax imports it anyway

trace_context: Callable[[], Any] = _trace_context
"""The JAX configuration that changes tracing (x64, default device, axis environment,
mesh context, ...), as JAX keys its own caches with it: part of every cache key for an
answer that came from tracing. (JAX's own function: it runs on every cached predict.)"""


def tracing() -> bool:
    """Whether JAX is tracing here (inside `jax.jit`, a transform or `eval_shape`): in a
    job of several processes, JAX's pmap then lays its mesh over this process's devices
    alone, where an eager call lays it over every process's (pmap.py:_get_mesh_devices,
    0.10.2 to 0.12.1)."""
    from jax._src import core

    return not core.trace_state_clean()


def process_global_shape(mesh: Any, spec: Any, shape: tuple[int, ...]) -> tuple[int, ...] | None:
    """The global shape `jax.make_array_from_process_local_data(NamedSharding(mesh, spec),
    data)` builds from this process's `data` of `shape`, as JAX infers it
    (sharding_impls.local_to_global_shape, 0.10.2 to 0.12.1); None where JAX cannot say
    (a mesh of this process's devices alone, a sharding that is not uniform over the
    processes, an abstract mesh)."""
    try:
        from jax._src.sharding_impls import local_to_global_shape

        found = local_to_global_shape(jax.sharding.NamedSharding(mesh, spec), tuple(shape))
    except Exception:  # an abstract mesh, or a future layout: no global shape to show
        return None
    sizes = [n for n in found if type(n) is int]
    return tuple(sizes) if len(sizes) == len(found) else None


def quiet_tracebacks() -> AbstractContextManager[Any]:
    """JAX's traceback filtering off, for traces whose exceptions axischeck only reads (the
    fix search's trials, JAX's verdict on a call): JAX filters each exception leaving its
    API by a file-system check per frame, about 3 ms a failure on this machine's runs."""
    from jax._src import config

    return cast(AbstractContextManager[Any], config.traceback_filtering("off"))


def custom_axis_spec(value: Any) -> bool:
    """Whether an in_axes/out_axes leaf is a spec object of a type registered with
    `register_vmappable` (or another non-int spec JAX accepts): axischeck leaves those
    to JAX."""
    return type(value) in _batching.spec_types or type(value).__name__ == "MappingSpec"


def vmappable_value(value: Any) -> bool:
    """Whether an argument leaf is of a type registered with `register_vmappable`."""
    return type(value) in _batching.vmappables


def tracing_now() -> bool:
    """Whether JAX is making a trace here (inside `jit`, a transform's trace, ...), where
    an operation on concrete values would be staged into it rather than computed."""
    try:
        from jax._src import core

        return not isinstance(core.trace_ctx.trace, core.EvalTrace)
    except (ImportError, AttributeError):  # pragma: no cover - a future layout
        return True


def batched_here(value: Any) -> bool:
    """Inside a function traced under `jax.vmap`: whether `value` carries the batch dim of
    the innermost vmap (JAX's test for `out_axes=None`). True when JAX's internals have
    moved, so the caller falls back to assuming every output is batched."""
    try:
        from jax._src import core
        from jax._src.interpreters import batching

        trace = core.trace_ctx.trace
        return isinstance(value, batching.BatchTracer) and value._trace is trace and value.batch_dim is not None
    except (ImportError, AttributeError):  # pragma: no cover - a future layout
        return True


NEGATIVE_COLLECTIVE_AXES_FAIL_LOWERING: bool = JAX_VERSION < (0, 11, 0)
"""psum_scatter's scatter_dimension and all_to_all's split/concat axes: negative values
trace but fail to lower before JAX 0.11 (which normalizes them when binding)."""

VMAP_MATCHES_CONTAINERS_BY_POSITION: bool = JAX_VERSION >= (0, 12, 1)
"""`jax.vmap` (not pmap) reads in_axes/out_axes with `tuptree_flat` first (jax 0.12.1,
checked against 0.12.0.1 and 0.12.1): a container of the axes meets a node of the
arguments or outputs with as many children (dicts: the same keys), of any type."""


def ppermute_axes_in_mesh_order() -> bool:
    """Whether JAX rejects, when lowering, a ppermute over mesh axes named out of the
    mesh's order (JAX >= 0.11.1, unless `jax_raise_on_ppermute_sort_diff` is off; the
    setting is part of JAX's trace context, so of every cache key of a traced answer)."""
    return bool(getattr(jax.config, "jax_raise_on_ppermute_sort_diff", False))


DEFAULT_MESH_AXIS_TYPE: Any = jax.sharding.AbstractMesh((1,), ("_",)).axis_types[0]
"""The axis type of an `AbstractMesh` built without `axis_types`: Auto before JAX 0.11.1,
Explicit from then on (a concrete `Mesh` defaults to Auto, `jax.make_mesh` to Explicit).
axischeck always reads a mesh's own types; this is for documentation and tests."""


def varying_axes(value: Any) -> frozenset[str] | None:
    """Inside a `shard_map` that checks vma: the mesh axes along which `value` (a traced
    value, a jaxpr variable, or an abstract value) may differ from device to device. JAX
    0.10 to 0.12 keep them in `aval.manual_axis_type.varying`, earlier JAX in `aval.vma`.
    None when the type does not say (no shard_map, or a layout not known here)."""
    aval = value if hasattr(value, "shape") and hasattr(value, "dtype") and not hasattr(value, "aval") else None
    if aval is None:
        aval = getattr(value, "aval", None)
    if aval is None:
        try:
            aval = jax.typeof(value)
        except TypeError:
            return None
    manual = getattr(aval, "manual_axis_type", None)
    varying = getattr(manual, "varying", None) if manual is not None else getattr(aval, "vma", None)
    return None if varying is None else frozenset(str(a) for a in varying)


def cast_to_varying(value: Any, axes: tuple[str, ...]) -> Any:
    """`value` marked as varying over the mesh axes `axes` (inside a shard_map that checks
    vma): what a value invariant over an axis needs before it meets a varying one in a
    loop carry or a branch (`pcast(x, axes, to='varying')`; JAX up to 0.7 spelled it
    `pvary`, which 0.10.2 and 0.12 no longer have)."""
    return jax.lax.pcast(value, axes, to="varying")


def varying_cast(value: str, axes: tuple[str, ...]) -> str:
    """The call that makes `value` (source text) vary over `axes`, as user code writes it."""
    named = repr(axes[0]) if len(axes) == 1 else repr(tuple(axes))
    return f"jax.lax.pcast({value}, {named}, to='varying')"


def _traceback_util() -> Any:
    """JAX's traceback filtering module; None where this JAX has moved it (frames shown)."""
    try:
        from jax._src import traceback_util
    except ImportError:  # pragma: no cover - a future layout
        return None
    return traceback_util


_TRACEBACK_UTIL = _traceback_util()


def hide_from_jax_frames(path: str) -> None:
    """Have JAX pass over the frames of files under `path` as it passes over its own (and
    Equinox registers its files): its traceback filtering hides them (users see their own
    frames and JAX's message, and everything with `JAX_TRACEBACK_FILTERING=off`), and its
    source information skips them, so a message's "created on line" and a lowered
    program's locations name the user's line, as without axischeck."""
    register = getattr(_TRACEBACK_UTIL, "register_exclusion", None)
    if register is not None:
        register(path)
    register = getattr(_source_info_util(), "register_exclusion", None)
    if register is not None:  # a prefix of file names: the separator keeps `axischeck_models/` the user's
        register(os.path.join(path, ""))


def _source_info_util() -> Any:
    """JAX's source information (the user's frame of each equation); None where moved."""
    try:
        from jax._src import source_info_util
    except ImportError:  # pragma: no cover - a future layout
        return None
    return source_info_util


def traceback_boundary(fun: C) -> C:
    """`fun` as a boundary of JAX's traceback filtering (what JAX puts around the functions
    its transforms return): an exception leaving it has the hidden files' frames removed,
    with JAX's note saying so. `fun` itself where this JAX has moved the helper."""
    boundary = getattr(_TRACEBACK_UTIL, "api_boundary", None)
    return fun if boundary is None else cast(C, boundary(fun))


def _boundary_code() -> Any:
    """The code of the wrapper JAX's `api_boundary` puts around a function, and the index
    of the wrapped function among its closure's cells; None where this JAX has moved it."""
    try:
        code = _TRACEBACK_UTIL.api_boundary(_boundary_code).__code__
        return code, code.co_freevars.index("fun")
    except (AttributeError, ValueError):  # pragma: no cover - a future layout
        return None


_BOUNDARY = _boundary_code()


def inside_boundary(fn: Callable[..., Any]) -> Callable[..., Any]:
    """The function JAX's traceback boundary around `fn` calls: for a caller that filters
    the tracebacks of what it raises itself (`filter_traceback_at_boundary`), so that the
    user's function runs as deep in the stack as under JAX's transform alone. `fn` itself
    when it is not that wrapper (pmap's function calls jit's boundary inside; a boundary
    that also records a repro has other code)."""
    if _BOUNDARY is None or getattr(fn, "__code__", None) is not _BOUNDARY[0]:
        return fn
    closure: tuple[CellType, ...] | None = getattr(fn, "__closure__", None)
    index: int = _BOUNDARY[1]
    if closure is None or len(closure) <= index:
        return fn
    inner = closure[index].cell_contents
    return inner if callable(inner) else fn


def _raise(err: BaseException) -> None:
    raise err


_RAISE_AT_BOUNDARY = traceback_boundary(_raise)


def filter_traceback_at_boundary(err: Exception) -> None:
    """Gives `err` the traceback JAX's traceback boundary would give it, in place, for the
    caller to re-raise with a bare `raise` (which adds no frame of its own): JAX's and
    axischeck's frames removed with JAX's note saying so, or nothing changed where JAX
    leaves it (`JAX_TRACEBACK_FILTERING=off`, an enclosing boundary that filters once).

    The caller is the boundary, and filters once, as JAX's nested boundaries do: where a
    call of the same function encloses it (a nest of checked transforms), that call
    filters; where a boundary of JAX's inside the call has filtered (pmap's function
    calls jit), only the frames added since are removed, and JAX's note moves last."""
    here = sys._getframe()
    boundary = sys._getframe(1).f_code
    outer = sys._getframe(1).f_back
    while outer is not None:
        if outer.f_code is boundary:
            return
        outer = outer.f_back
    if _filtered_by_jax(err):
        err.with_traceback(_TRACEBACK_UTIL.filter_traceback(err.__traceback__))
        _jax_note_last(err)
        return
    original = err.__traceback__
    try:
        _RAISE_AT_BOUNDARY(err)
    except BaseException as raised:
        if raised is not err:  # the boundary itself failed (an interrupt): that is what goes on
            raise
    seen = err.__traceback__
    while seen is not None and seen.tb_frame.f_code is not _raise.__code__:
        seen = seen.tb_next
    if seen is not None:  # the boundary left the frames as they were: so are they here
        err.with_traceback(original)
        return
    first = err.__traceback__  # this frame's entry, added as the exception left the boundary
    if first is not None and first.tb_frame is here:
        err.with_traceback(first.tb_next)


_JAX_NOTE: str | None = getattr(_TRACEBACK_UTIL, "_simplified_tb_msg", None)
"""The note JAX's boundary adds when it removes its frames."""
_UNFILTERED: type | None = getattr(_TRACEBACK_UTIL, "UnfilteredStackTrace", None)
"""The cause JAX's boundary gives an exception with `JAX_TRACEBACK_FILTERING=remove_frames`."""
_FILTERING_MODE: Callable[[], str] | None = getattr(_TRACEBACK_UTIL, "_filtering_mode", None)


def _filtered_by_jax(err: BaseException) -> bool:
    """Whether a boundary of JAX's has filtered `err`'s traceback where this JAX filters
    (not with `JAX_TRACEBACK_FILTERING=off` or IPython's hiding): its note says so (or,
    with `remove_frames`, the unfiltered trace is the cause)."""
    if _FILTERING_MODE is None or _JAX_NOTE is None or _UNFILTERED is None:  # pragma: no cover - a future layout
        return False
    if _FILTERING_MODE() not in ("quiet_remove_frames", "remove_frames"):
        return False
    notes = getattr(err, "__notes__", ())
    return isinstance(err.__cause__, _UNFILTERED) or any(isinstance(n, str) and _JAX_NOTE in n for n in notes)


def _jax_note_last(err: BaseException) -> None:
    """JAX's note about the frames it removed moved after axischeck's, where its boundary
    would have put it had it filtered last."""
    notes = getattr(err, "__notes__", None)
    if type(notes) is not list or _JAX_NOTE is None:
        return
    jax_notes = [n for n in notes if isinstance(n, str) and _JAX_NOTE in n]
    notes[:] = [n for n in notes if n not in jax_notes] + jax_notes


hide_from_jax_frames(str(Path(__file__).resolve().parent.parent))  # the whole axischeck package


# JAX's mapping transforms, by the file (under jax/_src) and function name of the code that
# a transformed function runs or wraps: `jax.vmap(f)` is `api_boundary` around `vmap_f`
# (jax/_src/api.py), `jax.pmap(f)` a function of jax/_src/pmap.py; None: any function there.
_JAX_MAPPED_CODE = {
    ("api.py", "vmap_f"): "jax.vmap",
    ("pmap.py", None): "jax.pmap",
    ("shard_map.py", None): "jax.shard_map",
}
_JAX_SRC = os.path.join("jax", "_src", "")


def jax_transform_of(fun: Any) -> str | None:
    """Which of JAX's mapping transforms made `fun` ("jax.vmap", "jax.pmap",
    "jax.shard_map"), or None for a function JAX has not mapped.

    Read from the code it runs and the functions its closure holds (two levels: JAX's
    traceback-filtering wrapper around the transform's own function), never by calling it.
    Such a function's annotations are those of the function it maps (JAX's `wraps` copies
    them), and its per-example signature is not theirs.
    """
    pending: list[tuple[Any, int]] = [(fun, 0)]
    while pending:
        obj, depth = pending.pop()
        code = getattr(obj, "__code__", None)
        if not isinstance(code, CodeType):
            continue
        path = code.co_filename
        if _JAX_SRC in path:
            base = os.path.basename(path)
            for (file, name), transform in _JAX_MAPPED_CODE.items():
                if base == file and name in (None, code.co_name):
                    return transform
        if depth < 2:
            for cell in getattr(obj, "__closure__", None) or ():
                try:
                    pending.append((cell.cell_contents, depth + 1))
                except ValueError:  # an empty cell
                    continue
    return None


def jaxpr_function(closed: Any) -> Callable[..., list[Any]] | None:
    """A closed jaxpr as a function of its inputs (its flat outputs): the recorded
    function asked again, by JAX's own rules for each primitive, without running the
    user's Python. None where this JAX has moved the helper."""
    try:
        from jax._src.core import jaxpr_as_fun
    except ImportError:  # pragma: no cover - a future layout
        return None
    return cast(Callable[..., list[Any]], jaxpr_as_fun(closed))


_VARYING_CASTS = frozenset({"pvary", "pcast", "reduced_vary_cast_p"})
"""The primitives that only mark a value as varying over a shard_map's mesh axes (value
and shape unchanged): `pvary` in JAX 0.10 to 0.12, `pcast` where JAX names it so."""


def jaxpr_function_unvaried(closed: Any) -> Callable[..., list[Any]] | None:
    """`jaxpr_function` for a record made inside a shard_map that checks vma, asked again
    outside it (a vmap's check after JAX traced it in a shard_map body): the casts that
    mark values as varying are dropped, a psum of varying values is a plain psum, and vma
    is not checked (`_check_vma` off). Values and shapes are what the record computes.
    None where this JAX has moved what it reads."""
    try:
        from jax._src.config import _check_vma
        from jax._src.lax.parallel import psum_p
    except ImportError:  # pragma: no cover - a future layout
        return None
    jaxpr, consts = closed.jaxpr, closed.consts

    def run(*args: Any) -> list[Any]:
        env: dict[Any, Any] = dict(zip(jaxpr.constvars, consts, strict=True))
        env.update(zip(jaxpr.invars, args, strict=True))

        def read(var: Any) -> Any:
            return var.val if is_literal(var) else env[var]

        with _check_vma(False):
            for eqn in equations(jaxpr):
                values = [read(v) for v in eqn.invars]
                primitive, params = eqn.primitive, eqn.primitive.get_bind_params(eqn.params)
                if primitive.name in _VARYING_CASTS:
                    env.update(zip(eqn.outvars, values, strict=True))
                    continue
                if primitive.name == "psum_invariant":  # psum's form for varying values
                    primitive, params = psum_p, {"axes": params["axes"], "axis_index_groups": None}
                with eqn.ctx.manager:
                    out = primitive.bind(*values, **params)
                outs = out if primitive.multiple_results else [out]
                env.update(zip(eqn.outvars, outs, strict=True))
        return [read(v) for v in jaxpr.outvars]

    return run


class JitsKept:
    """A function to record (`record`) with the jits it calls kept as calls in the record.

    JAX inlines a jit marked to inline early (jax.numpy's reductions, `jnp.mean` among
    them) into any jaxpr it stages, but an eager call runs it as one compiled computation,
    whose numerics may differ from its operations run one by one (XLA may multiply by the
    reciprocal of a constant divisor: one unit in the last place, on jax 0.12). A record
    replayed where JAX runs eagerly must run such a jit as JAX does, and replayed where JAX
    stages, must stage it as JAX does: the jits this function calls are kept as calls while
    it is recorded, and each one's own inline mode is put back in the record.

    Only the record's own trace is concerned (a jit inside a jit, a scan body or the
    function's jit-wrapped callees is traced as always), and only while `record` runs (a
    context variable: other threads' traces are untouched)."""

    # Named apart from the attributes of the jit that `jax.make_jaxpr` wraps around this
    # object, which copies them (a `trace` would hide the jit's own `.trace`).
    def __init__(self, fn: Callable[..., Any]) -> None:
        self._kept_fn = fn
        self._kept_trace: Any = None
        self._kept_modes: list[Any] = []  # the inline mode of each jit staged at the record's trace, in order

    def __call__(self, *args: Any) -> Any:
        self._kept_trace = _current_trace()
        return self._kept_fn(*args)

    def record(self, *args: Any) -> tuple[Any, Any] | None:
        """`jax.make_jaxpr(fn, return_shape=True)(*args)` with the jits `fn` calls kept as
        calls; None where this JAX does not let them be kept (the caller then lets JAX run
        the function itself). The function's own failure propagates."""
        if not _keeps_jits():
            return None
        token = _JITS_KEPT.set(self)
        try:
            closed, out = jax.make_jaxpr(self, return_shape=True)(*args)
        finally:
            _JITS_KEPT.reset(token)
        restored = self._restored(closed)
        return None if restored is None else (restored, out)

    def _restored(self, closed: Any) -> Any:
        """The record with each kept jit's own inline mode back (None where the record's
        calls are not the ones staged, one for one)."""
        from jax._src.pjit import jit_p

        inner = closed.jaxpr
        eqns = list(inner.eqns)
        calls = [i for i, eqn in enumerate(eqns) if eqn.primitive is jit_p]
        if len(calls) != len(self._kept_modes):
            return None
        for i, mode in zip(calls, self._kept_modes, strict=True):
            if _inlines_early(mode):
                eqns[i] = eqns[i].replace(params={**eqns[i].params, "inline": mode})
        if inner is closed:  # one class from JAX 0.11
            return closed.replace(eqns=eqns)
        return closed.replace(jaxpr=inner.replace(eqns=eqns))


_JITS_KEPT: ContextVar[JitsKept | None] = ContextVar("axischeck_jits_kept", default=None)


def _current_trace() -> Any:
    from jax._src import core

    return core.trace_ctx.trace


def _inlines_early(mode: Any) -> bool:
    """Whether a jit's inline mode inlines it when staged: `inline=True` up to 0.11,
    `Inline.JAX_EARLY` from the release that names the modes."""
    return mode is _EARLY if _EARLY is not None else bool(mode)


def _inline_modes() -> tuple[Any, Any]:
    """The inline mode that inlines a staged jit early and the one that keeps it a call."""
    from jax._src import core

    modes = getattr(core, "Inline", None)
    if modes is None:  # booleans: up to 0.11
        return None, False
    return modes.JAX_EARLY, modes.JAX_LATE


_EARLY, _KEPT_AS_CALL = _inline_modes()


@functools.cache
def _keeps_jits() -> bool:
    """Wraps JAX's staging rule of jit once, so that a `JitsKept` record keeps the jits
    staged at its own trace as calls; False where this JAX has moved the rule."""
    try:
        from jax._src.interpreters import partial_eval as pe
        from jax._src.pjit import jit_p
    except ImportError:  # pragma: no cover - a future layout
        return False
    rule = pe.custom_staging_rules.get(jit_p)
    if rule is None:  # pragma: no cover - a future layout
        return False

    def keeping(trace: Any, source_info: Any, *args: Any, **params: Any) -> Any:
        kept = _JITS_KEPT.get()
        if kept is not None and trace is kept._kept_trace:
            kept._kept_modes.append(params["inline"])
            if _inlines_early(params["inline"]):
                params = {**params, "inline": _KEPT_AS_CALL}
        return rule(trace, source_info, *args, **params)

    pe.custom_staging_rules[jit_p] = keeping
    return True


def equations(jaxpr: Any) -> Any:
    """The equations of a jaxpr, closed or not (one class from JAX 0.11)."""
    return jaxpr.eqns


def is_literal(var: Any) -> bool:
    """Whether a jaxpr operand is a literal (a constant written into the equation), not
    a variable; literals are unhashable in JAX 0.10."""
    return hasattr(var, "val")


def literal_array(var: Any) -> Any:
    """A jaxpr literal as the JAX array JAX's own evaluation gives for it: its value, of
    its abstract value's dtype and weak type."""
    aval = var.aval
    array = jnp.asarray(var.val, dtype=aval.dtype)
    if getattr(aval, "weak_type", False):
        from jax._src.lax import lax as _lax

        array = _lax._convert_element_type(array, aval.dtype, weak_type=True)
    return array


def scan_layout(params: Any) -> tuple[int, int] | None:
    """How many of a scan equation's inputs are constants, then carries: `num_consts` and
    `num_carry` before 0.12, the lengths of `ft_in`'s first two groups from then on. None
    where neither is there."""
    if "num_consts" in params and "num_carry" in params:
        return int(params["num_consts"]), int(params["num_carry"])
    groups = params.get("ft_in")  # a flat tree of (consts, carries, xs)
    if groups is None:
        return None
    try:
        consts, carries, _ = (list(group) for group in groups.unpack())
    except (AttributeError, TypeError, ValueError):
        return None
    return len(consts), len(carries)


try:
    # The public names; from jax 0.12 one type is both (ClosedJaxpr is Jaxpr there).
    import jax.extend.core as _extend_core

    _JAXPR_TYPES: tuple[type, ...] = (_extend_core.Jaxpr, getattr(_extend_core, "ClosedJaxpr", _extend_core.Jaxpr))
except (ImportError, AttributeError):  # pragma: no cover - a future layout
    _JAXPR_TYPES = ()


def sub_jaxprs(value: Any) -> list[Any]:
    """The jaxprs in an equation parameter (cond's branches, scan's body, a pjit's jaxpr)."""
    items = value if isinstance(value, (tuple, list)) else (value,)
    if _JAXPR_TYPES:
        return [item for item in items if isinstance(item, _JAXPR_TYPES)]
    return [item for item in items if hasattr(item, "eqns")]


# ----------------------------------------------------------------- random draws in a jaxpr
# Checked on jax 0.10.2 and 0.12.1: the names are the same, only parameters differ.

SAMPLER_PRIMITIVE = "random_bits"
"""The primitive every `jax.random` sampler draws its bits with, from a typed key (a raw
`uint32[2]` key is wrapped by `random_wrap` first); splitting and folding keys are
primitives of their own (`random_split`, `random_fold_in`), which draw nothing."""

AXIS_INDEX_PRIMITIVE = "axis_index"
"""`jax.lax.axis_index`: a value that differs along the named axes (`axis_name`)."""

SAME_ALONG_AXES = frozenset({"psum", "psum_invariant", "pmax", "pmin", "all_gather", "all_gather_invariant"})
"""Collectives whose result is the same on every member of the axes they name (a pmean
is a psum, then a division)."""

SPREAD_ALONG_AXES = frozenset({"ppermute", "all_to_all", "reduce_scatter", "psum_scatter"})
"""Collectives whose result differs along the axes they name, whatever their operand."""

TYPE_CASTS = frozenset({"pvary", "pcast"})
"""shard_map's casts of a value's varying-axes type (`pvary` up to JAX 0.7, `pcast`
since): the value itself is unchanged."""


def collective_axes(params: Any) -> tuple[Any, ...]:
    """The axis names a collective's parameters name (`axes` for psum, `axis_name` for
    the others; one name or a tuple)."""
    axes = params.get("axes", params.get("axis_name", ()))
    return tuple(axes) if isinstance(axes, (tuple, list)) else (axes,)


_RANDOM_SOURCE = os.path.join("jax", "_src", "random", "")
_RANDOM_MODULE = os.path.join("jax", "_src", "random.py")
"""Where `jax.random`'s public functions are defined (`jax/_src/random/core.py` in 0.10.2
and 0.12.1; `jax/_src/random.py` in older releases, matched below too)."""


RANDOM_MODULES = ("jax.random", "jax._src.random", "jax._src.prng")
"""The modules JAX's random functions and keys are defined in (with their submodules:
`jax._src.random.core` in 0.10.2 and 0.12.1, `jax._src.random` itself before)."""

JAX_MODULES = ("jax", "jaxlib")
"""The packages whose functions a map's function may call without their code being read
for draws: none draws but those of `RANDOM_MODULES`."""


def random_module(name: str) -> bool:
    """Whether a module (by name) is one of JAX's random modules, or inside one."""
    return any(name == module or name.startswith(module + ".") for module in RANDOM_MODULES)


def jax_module(name: str) -> bool:
    """Whether a module (by name) is JAX's own (see `JAX_MODULES`)."""
    return any(name == package or name.startswith(package + ".") for package in JAX_MODULES)


def random_function(file_name: str) -> bool:
    """Whether a traceback frame's file is JAX's `jax.random` code."""
    return _RANDOM_SOURCE in file_name or file_name.endswith(_RANDOM_MODULE)


def frames_of(eqn: Any) -> list[tuple[str, str, int]]:
    """The Python frames that bound `eqn` (file, qualified function, line), the innermost
    first, from the traceback JAX keeps in its source information; [] where it kept none."""
    traceback = getattr(getattr(eqn, "source_info", None), "traceback", None)
    frames = getattr(traceback, "frames", None) if traceback is not None else None
    if not frames:
        return []
    return [(f.file_name, f.function_name, f.line_num) for f in frames]


def jax_internal(file_name: str) -> bool:
    """Whether a frame's file is JAX's own (or axischeck's: both are hidden from the user)."""
    source_info = _source_info_util()
    is_user = getattr(source_info, "is_user_filename", None)
    if is_user is None:  # pragma: no cover - a future layout
        return _JAX_SRC in file_name
    return not is_user(file_name)


def is_key_array(value: Any) -> bool:
    """Whether `value` (an array, tracer or abstract value) looks like a PRNG key: a typed
    key (`jax.random.key`), or a raw `uint32` key of JAX's default implementation (last
    axis 2: `jax.random.PRNGKey`)."""
    dtype = getattr(value, "dtype", None)
    if dtype is None:
        return False
    try:
        if jnp.issubdtype(dtype, jax.dtypes.prng_key):
            return True
    except TypeError:
        return False
    shape = getattr(value, "shape", ())
    if not isinstance(shape, tuple):  # an object that only looks like an array
        return False
    return bool(dtype == np.uint32) and len(shape) >= 1 and shape[-1] == 2


def is_raw_key(value: Any) -> bool:
    """Whether `value` is a raw key (or keys): `jax.random.PRNGKey`'s uint32 words, no typed key."""
    return is_key_array(value) and getattr(value, "dtype", None) == np.uint32


def committed_sharding_refused(err: BaseException) -> bool:
    """Whether `err` is JAX refusing an argument already committed to another sharding
    than the one its transform asks for (pmap's in_axes None asks for a replicated copy;
    an array another pmap returned is split over the devices): a ValueError, read from
    its wording, the same from 0.10 to 0.12."""
    return isinstance(err, ValueError) and "Sharding passed to jit does not match the sharding" in str(err)


def spmd_axis_in_shard_map_specs(err: BaseException) -> bool:
    """Whether `err` is JAX refusing a vmap spmd_axis_name that an inner shard_map's specs
    name (a ValueError; read from its wording, the same from 0.10 to 0.12)."""
    return isinstance(err, ValueError) and "spmd_axis_name cannot appear in shard_map" in str(err)


_KEY_DTYPE: list[Any] = []


def default_key_dtype() -> Any:
    """The dtype of `jax.random.key(0)` under the default PRNG implementation (read once,
    abstractly: no key is made)."""
    if not _KEY_DTYPE:
        _KEY_DTYPE.append(jax.eval_shape(jax.random.key, 0).dtype)
    return _KEY_DTYPE[0]


# ----------------------------------------------------------------- JAX's error wordings
# Checked on jax 0.10.2 and 0.12.0.1.


def psum_scatter_size_refused(err: BaseException) -> bool:
    """JAX's per-device check of psum_scatter: the scattered dimension does not fit the
    axis (non-tiled: must equal its size)."""
    return "reduce_scatter operand scatter dimension" in str(err)


def tiled_scatter_indivisible(text: str) -> bool:
    """The same check for tiled psum_scatter: the dimension must divide by the axis size."""
    return "tiled reduce_scatter" in text


def replication_refused(err: BaseException) -> str | None:
    """shard_map's out_specs promise replication the function does not deliver: JAX's
    line that says which output and axis, else None when `err` is not this refusal."""
    text = str(err)
    if "require replication" not in text:
        return None
    return next((line for line in text.splitlines() if line.startswith("out_specs is")), text)


def replication_refusal_lines(err: BaseException) -> tuple[str, ...]:
    """JAX's own lines (one per out_specs entry) in its replication refusal, for the note
    that keeps JAX's words; () when `err` is not that refusal."""
    text = str(err)
    if "require replication" not in text:
        return ()
    return tuple(
        line.removeprefix("* ") for line in text.splitlines() if line.removeprefix("* ").startswith("out_specs")
    )


_AVAL_TEXT = r"[\w<>]+\[[^\]]*\](?:\{[^}]*\})?"
_CARRY = re.compile(
    r"(\w+) body function carry input and carry output must have equal types.*?"
    rf"The input carry (?:component )?(\S+) has type ({_AVAL_TEXT}) but the corresponding output carry"
    rf" component has type ({_AVAL_TEXT}), so the manual axis types do not match",
    re.S,
)
_BRANCHES = re.compile(
    r"(\w+) branches must have equal output types.*?"
    rf"The output of (.+?) has type ({_AVAL_TEXT}) but the corresponding output of (.+?) has type"
    rf" ({_AVAL_TEXT}), so the manual axis types do not match",
    re.S,
)
_VARYING_TEXT = re.compile(r"V:(\([^)]*\)|[^,}]+)")


def _varying_in_text(aval_text: str) -> frozenset[str]:
    m = _VARYING_TEXT.search(aval_text)
    if m is None:
        return frozenset()
    return frozenset(a.strip() for a in m.group(1).strip("()").split(",") if a.strip())


def manual_types_differ(err: BaseException) -> tuple[str, str, str, frozenset[str], frozenset[str]] | None:
    """A loop carry or the branches of a cond/switch whose values vary over different
    mesh axes (JAX's TypeError "... so the manual axis types do not match"), as (the
    primitive: "scan", "while_loop", "cond", "switch"; the first value: the carry's name
    for a loop ("c", "loop_carry[1]"), the branch for cond/switch ("false_fun",
    "branch 0"); the second (the loop body, or the other branch); the axes the first
    varies along and the second not; the axes the second varies along and the first not).
    For a loop the first is the initial carry and the second what the body returns. JAX's
    own hint for branches names no axis and may name the wrong branch (0.10.2, 0.12.0.1)."""
    if not isinstance(err, TypeError):
        return None
    text = str(err)
    m = _CARRY.search(text)
    if m is not None:
        loop, name, before, after = m.groups()
        start, end = _varying_in_text(before), _varying_in_text(after)
        return loop, name, "", start - end, end - start
    m = _BRANCHES.search(text)
    if m is not None:
        kind, first, first_type, second, second_type = m.groups()
        a, b = _varying_in_text(first_type), _varying_in_text(second_type)
        return kind, first, second, a - b, b - a
    return None


_CAST_TWICE = re.compile(r"Unsupported pcast from=varying, to='varying'")
_CAST_MIXED = re.compile(
    rf"jax\.lax\.pcast can only accept axis_name which corresponds to one of .*?Got input type: ({_AVAL_TEXT}),"
    r" axes: (\([^)]*\))",
    re.S,
)


def varying_cast_refused(err: BaseException) -> tuple[frozenset[str], tuple[str, ...]] | None:
    """`jax.lax.pcast(x, axes, to='varying')` refused because `x` already varies along
    some of `axes`: (the axes it varies along, when JAX says; the axes asked for, when
    JAX says), else None. Checked on 0.10.2 and 0.12.0.1."""
    if not isinstance(err, ValueError):
        return None
    text = str(err)
    if _CAST_TWICE.search(text):
        return frozenset(), ()
    m = _CAST_MIXED.search(text)
    if m is None:
        return None
    asked = tuple(a.strip().strip("'\"") for a in m.group(2).strip("()").split(",") if a.strip())
    return _varying_in_text(m.group(1)), asked


_EINSUM_SIZES = re.compile(r"Size of label '(\w)' for operand (\d+) \((\d+)\) does not match previous terms \((\d+)\)")


def einsum_size_mismatch(message: str) -> tuple[str, int, int, int] | None:
    """(label, operand, size JAX shows, previous size) from JAX's einsum size message,
    whose two sizes are swapped (docs/jax-semantics.md#misleading-jax-messages)."""
    m = _EINSUM_SIZES.search(message)
    if m is None:
        return None
    label, operand, shown, previous = m.groups()
    return label, int(operand), int(shown), int(previous)


_UNBOUND = re.compile(r"unbound axis name: ([^\s.]+)")


def unbound_axis_name(err: BaseException) -> str | None:
    """The axis name in JAX's NameError for a collective over a name nothing binds."""
    if not isinstance(err, NameError):
        return None
    m = _UNBOUND.search(str(err))
    return m.group(1) if m else None


_CONTRACTING = re.compile(r"contracting dimensions to have the same shape, got \((\d+),\) and \((\d+),\)")


def mismatched_sizes(message: str) -> tuple[str | None, int, int] | None:
    """(dimension label or None, the earlier size, the later size) when JAX's message sets
    two sizes against each other: einsum's label sizes (whose wording swaps them: the
    earlier operands have the size shown first) and dot_general's contracting dims."""
    einsum = einsum_size_mismatch(message)
    if einsum is not None:
        label, _, shown, previous = einsum
        return label, shown, previous
    m = _CONTRACTING.search(message)
    if m is not None:
        return None, int(m.group(1)), int(m.group(2))
    return None
