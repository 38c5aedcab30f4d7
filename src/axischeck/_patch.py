"""`axischeck.patch()` / `axischeck.unpatch()`: route `jax.vmap` and friends through axischeck.

While patched, the public names `jax.vmap`, `jax.pmap`, `jax.shard_map` and `jax.smap` (each
where axischeck has a counterpart) are axischeck's transforms, and so are the names user
modules imported from JAX before the patch (`from jax import vmap`). Every replacement is
recorded, and `unpatch()` puts back exactly what was there.

JAX's own modules (`jax.*`, `jaxlib.*`) are never touched: JAX's internals bind their
transforms from `jax._src` (`jax._src.api.vmap`, ...) and keep calling JAX's own. Neither are
axischeck's: its decorators call JAX's real transforms, captured before any patch.
"""

from __future__ import annotations

import dataclasses
import importlib
import importlib.abc
import importlib.machinery
import sys
import threading
import types
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from ._switch import checks_off

__all__ = ["PatchContext", "patch", "patch_at_jax_import", "unpatch"]

TRANSFORMS = ("vmap", "pmap", "shard_map", "smap")
"""The `jax.*` names that `patch()` routes through axischeck (where axischeck has one)."""


# Modules whose globals are left alone: JAX and axischeck themselves, and libraries that
# build their own transforms on JAX's (their internals should keep calling JAX's).
_SKIPPED_PACKAGES = frozenset(
    """
    jax jaxlib jax_plugins axischeck flax equinox chex haiku optax orbax jaxtyping penzai einx
    numpyro diffrax lineax optimistix oryx jraph distrax brax tensorflow keras torch numpy scipy
    hypothesis pytest _pytest
    """.split()
)


def originals() -> dict[str, Any]:
    """JAX's own transform for each name in `TRANSFORMS` (None where this JAX has none).

    These are the objects `_jax_compat` captured when it was first imported, before any
    patch; axischeck's decorators call the same ones, so they never see a patched `jax.vmap`.
    Importing them imports jax, so this module reads them only when asked: `axischeck run`
    and `pytest --axischeck` import this module before the program imports jax.
    """
    from ._core._jax_compat import JAX_PMAP, JAX_SHARD_MAP, JAX_SMAP, JAX_VMAP

    return {"vmap": JAX_VMAP, "pmap": JAX_PMAP, "shard_map": JAX_SHARD_MAP, "smap": JAX_SMAP}


@dataclasses.dataclass(frozen=True, slots=True)
class _Swap:
    """One replaced binding: `namespace[key]` was `old` and is now `new`."""

    namespace: dict[str, Any]
    key: str
    old: Any
    new: Any
    where: str

    def undo(self) -> None:
        # Only put back what is still ours: a name rebound since the patch is left as it is.
        if self.namespace.get(self.key, _MISSING) is self.new:
            self.namespace[self.key] = self.old


_MISSING = object()
_LOCK = threading.RLock()
_swaps: list[_Swap] = []  # guarded by _LOCK; empty when not patched
_active = False
_generation = 0  # bumped by every patch that starts from unpatched


# Libraries' own transforms that axischeck wraps, routed while patched when the library is
# imported: (library module, its name, axischeck module, axischeck's name).
LIBRARY_TRANSFORMS = (
    ("equinox", "filter_vmap", "axischeck.eqx", "filter_vmap"),
    ("equinox", "filter_pmap", "axischeck.eqx", "filter_pmap"),
    ("flax.nnx", "vmap", "axischeck.nnx", "vmap"),
    ("flax.nnx", "pmap", "axischeck.nnx", "pmap"),
)


def _library_routes() -> list[tuple[dict[str, Any], str, Any, Any, str]]:
    """For each wrapped library transform whose library is imported: (the library module's
    namespace, name, the library's function, axischeck's, where). Importing axischeck's
    wrapper module happens only here, so `import axischeck` never imports the libraries."""
    found: list[tuple[dict[str, Any], str, Any, Any, str]] = []
    for library, name, ours, our_name in LIBRARY_TRANSFORMS:
        module = sys.modules.get(library)
        if module is None:
            continue
        original = vars(module).get(name)
        try:
            replacement = getattr(importlib.import_module(ours), our_name)
        except (ImportError, AttributeError):
            continue
        if original is None or original is replacement:
            continue
        found.append((vars(module), name, original, replacement, f"{library}.{name}"))
    return found


def _skipped(module_name: str) -> bool:
    return module_name.partition(".")[0] in _SKIPPED_PACKAGES


def _module_globals() -> Iterator[tuple[str, dict[str, Any]]]:
    for name, module in list(sys.modules.items()):
        if not isinstance(module, types.ModuleType) or _skipped(name):
            continue
        try:
            namespace = vars(module)
        except TypeError:  # pragma: no cover - an exotic module object without __dict__
            continue
        yield name, namespace


def _plan(
    routes: Mapping[int, tuple[str, Any]], libraries: Sequence[tuple[dict[str, Any], str, Any, Any, str]] = ()
) -> list[_Swap]:
    """The swaps to make now: `jax.<name>` and every user-module global bound to JAX's."""
    done = {(id(s.namespace), s.key) for s in _swaps}
    plan: list[_Swap] = []

    def add(namespace: dict[str, Any], key: str, new: Any, where: str) -> None:
        if (id(namespace), key) not in done:
            plan.append(_Swap(namespace, key, namespace[key], new, where))
            done.add((id(namespace), key))

    jax_globals: dict[str, Any] = vars(sys.modules["jax"])  # the module namespace itself
    for original, (name, replacement) in routes.items():
        if jax_globals.get(name) is not None and id(jax_globals[name]) == original:
            add(jax_globals, name, replacement, f"jax.{name}")
    for namespace, name, _original, replacement, where in libraries:
        add(namespace, name, replacement, where)
    for module_name, namespace in _module_globals():
        for key, value in list(namespace.items()):
            route = routes.get(id(value))
            if route is not None:
                add(namespace, key, route[1], f"{module_name}.{key}")
    return plan


class PatchContext:
    """What `patch()` returns: the patch is already on; use it as a context manager to
    turn it off again on exit (only if this `patch()` call was the one that turned it on)."""

    __slots__ = ("_generation", "_owner")

    def __init__(self, owner: bool, generation: int) -> None:
        self._owner = owner
        self._generation = generation

    def __enter__(self) -> PatchContext:
        return self

    def __exit__(self, *exc_info: object) -> None:
        with _LOCK:
            if self._owner and _active and _generation == self._generation:
                unpatch()

    def __repr__(self) -> str:
        return f"<axischeck.patch {'active' if _active else 'inactive'}>"


def patch() -> PatchContext:
    """Route `jax.vmap`, `jax.pmap`, `jax.shard_map` and `jax.smap` through axischeck.

    Every name axischeck has a counterpart for is replaced: the attribute on the `jax`
    module, and the module globals that user code bound to JAX's function before the patch
    (`from jax import vmap`). JAX's own modules, axischeck's and those of libraries built on
    JAX's transforms (flax, equinox, chex, ...) keep JAX's. Code imported while patched binds
    axischeck's transforms through `jax.*` by itself.

    Patching again while patched is harmless: it also swaps names imported since. Calling
    `unpatch()` restores everything; used as a context manager, `patch()` restores on exit
    (also after an exception) unless the patch was already on when it was entered.

    ```python
    >>> with ax.patch():
    ...     print(jax.vmap is ax.vmap, jax.vmap(jnp.sum)(jnp.ones((3, 4))).shape)
    True (3,)
    >>> jax.vmap is ax.vmap
    False
    ```

    Not thread-local: the patch applies to every thread of the process. With the checks
    off (`AXISCHECK_DISABLE=1`, or inside `checks_disabled()`), it swaps nothing.
    """
    global _active, _generation
    if checks_off():  # AXISCHECK_DISABLE=1 (or inside `checks_disabled()`): JAX's own, nothing swapped
        return PatchContext(False, _generation)
    import axischeck

    # Imported before taking the lock (this imports jax): a thread inside jax's first import
    # holds jax's import lock and takes this lock in `_jax_imported`.
    jax_transforms = originals()
    routes = {
        id(original): (name, replacement)
        for name, original in jax_transforms.items()
        if original is not None and (replacement := getattr(axischeck, name, None)) is not None
    }
    libraries = _library_routes()
    routes.update({id(original): (name, new) for _ns, name, original, new, _where in libraries})
    with _LOCK:
        owner = not _active
        if owner:
            _generation += 1
        if not any(type(finder) is _PatchOnLibraryImport for finder in sys.meta_path):
            sys.meta_path.insert(0, _PatchOnLibraryImport())
        plan = _plan(routes, libraries)
        for swap in plan:
            swap.namespace[swap.key] = swap.new
        _swaps.extend(plan)
        _active = True
        return PatchContext(owner, _generation)


def unpatch() -> None:
    """Undo `patch()`: put back every binding it replaced (a no-op when not patched).

    ```python
    >>> original = jax.vmap
    >>> _ = ax.patch()
    >>> ax.unpatch()
    >>> jax.vmap is original
    True
    ```
    """
    global _active
    with _LOCK:
        _remove_import_hook()
        while _swaps:
            _swaps.pop().undo()
        _active = False


def patch_at_jax_import() -> PatchContext:
    """Patch mode for a program that has not imported jax yet: `patch()` runs right after
    jax's own `__init__` finishes, inside the program's first `import jax`.

    JAX reads its environment (`JAX_ENABLE_X64`, `JAX_PLATFORMS`, `XLA_FLAGS`, ...) when it
    is imported, so importing it before the program does would ignore the settings the
    program makes first; `python prog.py` honours them, and so must `axischeck run prog.py`.
    A `sys.meta_path` finder finds `jax`'s spec through the finders after it and has its
    loader call `patch()` once the module code has run, before `import jax` returns to the
    program, so `from jax import vmap` already binds axischeck's. When jax is already
    imported, this is `patch()`. `unpatch()` (or leaving the returned context) also takes
    the finder out if jax was never imported.
    """
    global _active, _generation
    if checks_off() or sys.modules.get("jax") is not None:
        return patch()
    with _LOCK:
        owner = not _active
        if owner:
            _generation += 1
        _active = True
        # A library imported before jax (`import equinox` first, as isort orders it)
        # imports jax itself, half-way through its own import: its transforms are routed
        # when that import returns, so the library's finder is in place from the start.
        for hook in (_PatchOnLibraryImport, _PatchOnJaxImport):
            if not any(type(finder) is hook for finder in sys.meta_path):
                sys.meta_path.insert(0, hook())
        context = PatchContext(owner, _generation)
    if sys.modules.get("jax") is not None:  # imported by another thread meanwhile, past the finder
        patch()  # (`patch()` waits for that import to finish; patching twice is harmless)
    return context


def _remove_import_hook(hook: type[_PatchOnJaxImport] | None = None) -> None:
    kinds = (hook,) if hook is not None else (_PatchOnJaxImport, _PatchOnLibraryImport)
    sys.meta_path[:] = [finder for finder in sys.meta_path if type(finder) not in kinds]


def _jax_imported() -> None:
    """Called right after jax's module code ran: swap its transforms if patch mode is still on."""
    with _LOCK:
        _remove_import_hook(_PatchOnJaxImport)
        active = _active
    if active:
        patch()


def _library_imported() -> None:
    """Called right after a wrapped library (equinox, flax.nnx) was imported: route its
    transforms if patch mode is on and jax is imported."""
    with _LOCK:
        active = _active
    if active and sys.modules.get("jax") is not None:
        patch()


class _PatchOnJaxImport(importlib.abc.MetaPathFinder):
    """Finds nothing itself: for `jax`, it takes the spec the finders after it give and
    makes its loader call `_jax_imported()` after executing the module (the hook point
    Python's import system offers; `importlib.util.LazyLoader` wraps a loader the same way)."""

    names: frozenset[str] = frozenset({"jax"})

    def imported(self) -> None:
        _jax_imported()

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: types.ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname not in self.names:
            return None
        finders = list(sys.meta_path)
        if self not in finders:
            return None
        for finder in finders[finders.index(self) + 1 :]:
            find_spec = getattr(finder, "find_spec", None)
            spec = find_spec(fullname, path, target) if find_spec is not None else None
            if isinstance(spec, importlib.machinery.ModuleSpec):
                break
        else:
            return None  # Python's own ModuleNotFoundError follows
        loader = spec.loader
        exec_module: Callable[[types.ModuleType], None] | None = getattr(loader, "exec_module", None)
        if loader is None or exec_module is None:
            return spec  # a loader without exec_module: jax is patched by the next patch() call

        def exec_then_patch(module: types.ModuleType) -> None:
            try:
                exec_module(module)
            finally:
                vars(loader).pop("exec_module", None)  # the loader is jax's alone: leave it as found
            self.imported()

        try:
            # On the instance only: the finder made this loader for jax's spec, and
            # `jax.__loader__` stays the real loader (importlib.resources asks it).
            loader.exec_module = exec_then_patch  # type: ignore[method-assign]
        except AttributeError:  # pragma: no cover - a loader with __slots__
            return spec
        return spec


class _PatchOnLibraryImport(_PatchOnJaxImport):
    """The same hook for the libraries whose transforms axischeck wraps: imported while
    patched, their transforms are routed before the import returns."""

    names = frozenset(library for library, *_ in LIBRARY_TRANSFORMS)

    def imported(self) -> None:
        _library_imported()


def is_patched() -> bool:
    """Whether patch mode is on (`patch()`, or `patch_at_jax_import()` waiting for jax)."""
    return _active


def replacements() -> list[str]:
    """Where the current patch replaced a binding, as `module.name` strings."""
    with _LOCK:
        return [swap.where for swap in _swaps]
