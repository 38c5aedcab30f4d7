"""Test helpers: prediction equals JAX, and several CPU devices for pmap tests.

```python
import axischeck as ax
from axischeck.testing import assert_predicts_jax

f = ax.vmap(fun, in_axes=(0, 1, 0), signature="(a,b),(b,c),(a,c)->(a,c)")
assert_predicts_jax(f, x, y, z)   # predict() equals jax.eval_shape of the plain transform
```
"""

from __future__ import annotations

import os
from typing import Any

import jax

from ._errors import AxisCheckError, SpecError
from ._jax_compat import backend_initialized
from ._leaves import shapes_as_structs
from ._prediction import Prediction
from ._shape import format_shape
from ._transform import Transformed
from ._trees import leaf_paths

__all__ = ["assert_predicts_jax", "set_n_cpu_devices"]


def assert_predicts_jax(fn: Transformed[..., Any], *args: Any, **kwargs: Any) -> Prediction | None:
    """Assert that `fn.predict(...)` equals what JAX computes, shapes and structure.

    The oracle is `jax.eval_shape` of the plain JAX transform `fn` stands in for. Where
    JAX raises, `predict` must raise an `AxisCheckError` (then None is returned). On a
    mismatch the `AssertionError` lists every differing output leaf.
    """
    if not isinstance(fn, Transformed):
        raise SpecError(f"assert_predicts_jax takes an axischeck transform (ax.vmap, ax.pmap, ax.check), got {fn!r}")
    args, kwargs = shapes_as_structs(args, kwargs)
    try:
        want = jax.eval_shape(fn._jax_fn, *args, **kwargs)
    except Exception as jax_err:
        try:
            pred = fn.predict(*args, **kwargs)
        except AxisCheckError:
            return None
        raise AssertionError(
            f"JAX raises {type(jax_err).__name__}: {jax_err}\nbut axischeck predicts {pred.shapes!r}"
        ) from jax_err
    try:
        pred = fn.predict(*args, **kwargs)
    except AxisCheckError as err:
        raise AssertionError(f"JAX succeeds with {want!r}\nbut axischeck raises {type(err).__name__}: {err}") from err
    want_shapes = jax.tree_util.tree_map(lambda s: tuple(s.shape), want)
    got_leaves, got_treedef = jax.tree_util.tree_flatten(pred.shapes)
    want_leaves, want_treedef = jax.tree_util.tree_flatten(want_shapes, is_leaf=lambda x: type(x) is tuple)
    got_def: Any = got_treedef
    want_def: Any = want_treedef
    if got_def != want_def:
        raise AssertionError(f"output structures differ:\n  JAX:       {want_def}\n  axischeck: {got_def}")
    diffs = [
        f"  output{path}: JAX {format_shape(w)}, axischeck {format_shape(g)}"
        for path, g, w in zip(leaf_paths(pred.shapes), got_leaves, want_leaves, strict=True)
        if tuple(g) != tuple(w)
    ]
    if diffs:
        raise AssertionError("predicted shapes differ from JAX's:\n" + "\n".join(diffs))
    return pred


def set_n_cpu_devices(n: int) -> None:
    """Make JAX's CPU backend show `n` devices (for pmap tests on one machine).

    Like chex's helper, it sets `XLA_FLAGS`; that works only before JAX creates its
    backends (before the first array or device query), so call it at the top of a
    conftest.py. Afterwards it raises a `SpecError` saying so, rather than silently
    leaving the device count as it was.
    """
    if type(n) is not int or n < 1:
        raise SpecError(f"set_n_cpu_devices needs a device count >= 1, got {n!r}")
    if backend_initialized():
        if jax.device_count() == n and jax.default_backend() == "cpu":
            return
        raise SpecError(
            f"JAX has already created its backends ({jax.device_count()} device(s)), so it no longer"
            " reads XLA_FLAGS; call set_n_cpu_devices before any array is created or device is"
            " queried (e.g. at the top of conftest.py), or start a new process"
        )
    flags = [f for f in os.environ.get("XLA_FLAGS", "").split() if not f.startswith("--xla_force_host_platform_device_count")]
    os.environ["XLA_FLAGS"] = " ".join([*flags, f"--xla_force_host_platform_device_count={n}"])
