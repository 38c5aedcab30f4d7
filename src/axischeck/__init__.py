"""axischeck: shape-annotated, statically predicted and explained `vmap`, `pmap`, `shard_map` and `smap` for JAX.

```python
import axischeck as ax

f = ax.vmap(fun, in_axes=(0, 1, 0), signature="(a,b),(b,c),(a,c)->(a,c)")
f.predict(x, y, z).shapes   # output shapes, without running fun
f.explain(x, y, z)          # the derivation table
f(x, y, z)                  # checked call: same result as jax.vmap
```
"""

from ._check import Checked as Checked
from ._check import check as check
from ._errors import ArgumentError as ArgumentError
from ._errors import AxisCheckError as AxisCheckError
from ._errors import AxisCheckWarning as AxisCheckWarning
from ._errors import CollectiveError as CollectiveError
from ._errors import FunctionError as FunctionError
from ._errors import OutputError as OutputError
from ._errors import Place as Place
from ._errors import SpecError as SpecError
from ._patch import patch as patch
from ._patch import unpatch as unpatch
from ._pmap import Pmapped as Pmapped
from ._pmap import pmap as pmap
from ._prediction import Prediction as Prediction
from ._prediction import ShardPrediction as ShardPrediction
from ._shape import Shape as Shape
from ._shard_map import ShardMapped as ShardMapped
from ._shard_map import shard_map as shard_map
from ._sharding import shard_shape as shard_shape
from ._signature import Signature as Signature
from ._smap import Smapped as Smapped
from ._smap import smap as smap
from ._unify import Bindings as Bindings
from ._unify import Conflict as Conflict
from ._vmap import Vmapped as Vmapped
from ._vmap import vmap as vmap


def _installed_version() -> str:
    """The version pip installed (pyproject.toml's, one source of truth)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("axischeck")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "0+unknown"


__version__ = _installed_version()

for _public in (
    Bindings,
    Checked,
    Conflict,
    Place,
    Pmapped,
    Prediction,
    Shape,
    ShardMapped,
    ShardPrediction,
    Signature,
    Smapped,
    Vmapped,
):
    _public.__module__ = "axischeck"  # stable, short names in reprs and tracebacks
del _public

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
    "Signature",
    "Smapped",
    "SpecError",
    "Vmapped",
    "check",
    "patch",
    "pmap",
    "shard_map",
    "shard_shape",
    "smap",
    "unpatch",
    "vmap",
]
