"""axischeck: shape-annotated, statically predicted and explained `vmap`, `pmap`, `shard_map` and `smap` for JAX.

```python
import axischeck as ax

f = ax.vmap(fun, in_axes=(0, 1, 0), signature="(a,b),(b,c),(a,c)->(a,c)")
f.predict(x, y, z).shapes   # output shapes, without running fun
f.explain(x, y, z)          # the derivation table
f(x, y, z)                  # checked call: same result as jax.vmap
```
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # what type checkers see; at run time `__getattr__` loads the same names
    from ._check import Checked as Checked
    from ._check import check as check
    from ._core._errors import ArgumentError as ArgumentError
    from ._core._errors import AxisCheckError as AxisCheckError
    from ._core._errors import AxisCheckWarning as AxisCheckWarning
    from ._core._errors import CollectiveError as CollectiveError
    from ._core._errors import FunctionError as FunctionError
    from ._core._errors import OutputError as OutputError
    from ._core._errors import Place as Place
    from ._core._errors import SharedRandomnessWarning as SharedRandomnessWarning
    from ._core._errors import SpecError as SpecError
    from ._core._prediction import Prediction as Prediction
    from ._core._prediction import ShardPrediction as ShardPrediction
    from ._core._shape import Shape as Shape
    from ._engine._sharding import shard_shape as shard_shape
    from ._engine._signature import Signature as Signature
    from ._engine._unify import Bindings as Bindings
    from ._engine._unify import Conflict as Conflict
    from ._patch import patch as patch
    from ._patch import unpatch as unpatch
    from ._pmap import PmapOptions as PmapOptions
    from ._pmap import Pmapped as Pmapped
    from ._pmap import pmap as pmap
    from ._shard_map import ShardMapOptions as ShardMapOptions
    from ._shard_map import ShardMapped as ShardMapped
    from ._shard_map import shard_map as shard_map
    from ._smap import SmapOptions as SmapOptions
    from ._smap import Smapped as Smapped
    from ._smap import smap as smap
    from ._switch import checks_disabled as checks_disabled
    from ._vmap import VmapOptions as VmapOptions
    from ._vmap import Vmapped as Vmapped
    from ._vmap import vmap as vmap

    __version__: str

_WHERE = {
    "Checked": "._check",
    "check": "._check",
    "ArgumentError": "._core._errors",
    "AxisCheckError": "._core._errors",
    "AxisCheckWarning": "._core._errors",
    "CollectiveError": "._core._errors",
    "FunctionError": "._core._errors",
    "OutputError": "._core._errors",
    "Place": "._core._errors",
    "SharedRandomnessWarning": "._core._errors",
    "SpecError": "._core._errors",
    "patch": "._patch",
    "unpatch": "._patch",
    "Pmapped": "._pmap",
    "PmapOptions": "._pmap",
    "pmap": "._pmap",
    "Prediction": "._core._prediction",
    "ShardPrediction": "._core._prediction",
    "Shape": "._core._shape",
    "ShardMapped": "._shard_map",
    "ShardMapOptions": "._shard_map",
    "shard_map": "._shard_map",
    "shard_shape": "._engine._sharding",
    "Signature": "._engine._signature",
    "Smapped": "._smap",
    "SmapOptions": "._smap",
    "smap": "._smap",
    "checks_disabled": "._switch",
    "Bindings": "._engine._unify",
    "Conflict": "._engine._unify",
    "Vmapped": "._vmap",
    "VmapOptions": "._vmap",
    "vmap": "._vmap",
}
"""Each public name and the module that defines it."""


def _load() -> None:
    """Import the whole public API at once, at the first use of any public name: `import
    axischeck` alone imports no jax (pytest loads our plugin in every project, mypy our
    plugin), while `ax.vmap` and `from axischeck import vmap` work as usual."""
    from importlib import import_module

    namespace = globals()
    for name, module in _WHERE.items():
        namespace[name] = getattr(import_module(module, __name__), name)
    for name in _WHERE:
        if isinstance(namespace[name], type):  # shown as `axischeck.X` in reprs and tracebacks
            namespace[name].__module__ = "axischeck"  # (and pickled under that name)


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        _load()
        return globals()[name]
    if name == "__version__":
        from importlib.metadata import PackageNotFoundError, version

        try:
            found = version("axischeck")  # pyproject.toml's, one source of truth
        except PackageNotFoundError:  # run from a source tree that was never installed
            found = "0+unknown"
        globals()["__version__"] = found
        return found
    raise AttributeError(f"module 'axischeck' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__, "__version__"})


__all__ = [
    "ArgumentError",
    "AxisCheckError",
    "AxisCheckWarning",
    "Bindings",
    "Checked",
    "CollectiveError",
    "Conflict",
    "FunctionError",
    "OutputError",
    "Place",
    "Pmapped",
    "Prediction",
    "Shape",
    "ShardMapped",
    "ShardPrediction",
    "SharedRandomnessWarning",
    "Signature",
    "Smapped",
    "SpecError",
    "Vmapped",
    "check",
    "checks_disabled",
    "patch",
    "pmap",
    "shard_map",
    "shard_shape",
    "smap",
    "unpatch",
    "vmap",
]
