"""Test helpers: prediction equals JAX, and several CPU devices for pmap tests.

```python
import axischeck as ax
from axischeck.testing import assert_predicts_jax, check_against_jax

f = ax.vmap(fun, in_axes=(0, 1, 0), signature="(a,b),(b,c),(a,c)->(a,c)")
assert_predicts_jax(f, x, y, z)   # predict() equals jax.eval_shape of the plain transform

def test_f():
    check_against_jax(f)          # the same for drawn shapes, and a real call (needs hypothesis)
```
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import DTypeLike

from ._core._errors import AxisCheckError, SpecError
from ._core._jax_compat import backend_initialized
from ._core._leaves import shapes_as_structs
from ._core._prediction import Prediction
from ._core._text import format_shape
from ._core._trees import leaf_paths
from ._transform import Transformed

__all__ = ["assert_predicts_jax", "check_against_jax", "set_n_cpu_devices"]


def assert_predicts_jax(fn: Transformed[..., Any], *args: Any, **kwargs: Any) -> Prediction | None:
    """Assert that `fn.predict(...)` equals what JAX computes, shapes and structure.

    The oracle is `jax.eval_shape` of the plain JAX transform `fn` stands in for. Where
    JAX raises, `predict` must raise an `AxisCheckError` (then None is returned). On a
    mismatch the `AssertionError` lists every differing output leaf.

    ```python
    >>> from axischeck.testing import assert_predicts_jax
    >>> f = ax.vmap(jnp.dot, in_axes=(0, None), signature="(n),(n)->()")
    >>> assert_predicts_jax(f, (5, 3), (3,)).shapes
    Shape(5)
    >>> assert_predicts_jax(f, (5, 3), (4,)) is None   # JAX and axischeck both refuse
    True
    >>> liar = ax.vmap(jnp.outer, signature="(a),(b)->(b,a)")
    >>> assert_predicts_jax(liar, (5, 2), (5, 3))
    Traceback (most recent call last):
    AssertionError: predicted shapes differ from JAX's:
      output: JAX (5, 2, 3), axischeck (5, 3, 2)
    ```
    """
    if not isinstance(fn, Transformed):
        raise SpecError(
            f"assert_predicts_jax takes an axischeck transform (ax.vmap, ax.pmap, ax.shard_map, ax.check), got {fn!r}"
        )
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
    got_leaves, got_treedef = jax.tree_util.tree_flatten(pred.shapes)
    want_leaves, want_treedef = jax.tree_util.tree_flatten(want)  # ShapeDtypeStruct leaves
    got_def: Any = got_treedef
    want_def: Any = want_treedef
    if got_def != want_def:
        raise AssertionError(f"output structures differ:\n  JAX:       {want_def}\n  axischeck: {got_def}")
    diffs = [
        f"  output{path}: JAX {format_shape(tuple(w.shape))}, axischeck {format_shape(g)}"
        for path, g, w in zip(leaf_paths(pred.shapes), got_leaves, want_leaves, strict=True)
        if tuple(g) != tuple(w.shape)
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

    ```python
    # conftest.py, before anything creates a JAX array
    from axischeck.testing import set_n_cpu_devices
    set_n_cpu_devices(8)
    ```
    ```python
    >>> from axischeck.testing import set_n_cpu_devices
    >>> set_n_cpu_devices(0)
    Traceback (most recent call last):
    axischeck.SpecError: set_n_cpu_devices needs a device count >= 1, got 0
    ```
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
    flags = [
        f for f in os.environ.get("XLA_FLAGS", "").split() if not f.startswith("--xla_force_host_platform_device_count")
    ]
    os.environ["XLA_FLAGS"] = " ".join([*flags, f"--xla_force_host_platform_device_count={n}"])


def check_against_jax(
    fn: Transformed[..., Any],
    *,
    max_examples: int = 25,
    real_run: bool = True,
    sizes: Mapping[str, int | Sequence[int]] | None = None,
    max_side: int = 4,
    max_batch: int = 4,
    dtype: DTypeLike | Sequence[DTypeLike] = np.float32,
) -> None:
    """Property-test a decorated function against JAX, in one line of a pytest test.

    hypothesis draws argument shapes that satisfy `fn`'s declared signature and axes
    (`axischeck.strategies.arguments_for`); for each, `fn.predict` must equal
    `jax.eval_shape` of the plain JAX transform (`assert_predicts_jax`), and with
    `real_run` a real call on arrays of ones must return exactly the predicted shapes (skipped
    for a shard_map whose mesh is given as sizes: it predicts but cannot run).
    JAX refusing shapes that satisfy the signature fails too: the signature promises
    more than the function keeps (pin sizes with `sizes={"n": 3}` if that is intended).
    Failures raise `AssertionError` naming the drawn shapes; hypothesis shrinks them
    first. Needs hypothesis (`pip install 'axischeck[strategies]'`).

    ```python
    >>> from axischeck.testing import check_against_jax
    >>> check_against_jax(ax.vmap(jnp.outer, signature="(a),(b)->(a,b)"), max_examples=5)
    >>> liar = ax.vmap(jnp.outer, signature="(a),(b)->(b,a)")
    >>> check_against_jax(liar, max_examples=5)   # doctest: +ELLIPSIS
    Traceback (most recent call last):
    AssertionError: vmap(outer, in_axes=0, out_axes=0) with a=..., b=...: predicted shapes differ from JAX's: ...
    ```
    """
    try:
        from hypothesis import HealthCheck, given, settings
    except ImportError as err:
        raise ModuleNotFoundError(
            "check_against_jax needs hypothesis, which is not installed:"
            " pip install 'axischeck[strategies]' (or pip install hypothesis)",
            name="hypothesis",
        ) from err
    from .strategies import arguments_for

    strategy = arguments_for(fn, sizes=sizes, max_side=max_side, max_batch=max_batch, dtype=dtype)
    names = _argument_names(fn)

    @settings(
        max_examples=max_examples,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow],
        report_multiple_bugs=False,  # one AssertionError, for the simplest failing shapes
    )
    @given(strategy)
    def agrees_with_jax(args: tuple[Any, ...]) -> None:
        try:
            _check_one(fn, args, real_run)
        except AssertionError as err:
            drawn = ", ".join(f"{n}={format_shape(tuple(a.shape))}" for n, a in zip(names, args, strict=False))
            raise AssertionError(f"{fn._describe()} with {drawn}: {err}") from None

    try:
        agrees_with_jax()
    except AssertionError as err:
        # hypothesis attaches the falsifying example as __notes__; they go into the message
        # itself, since before Python 3.11.4 doctest and some reporters read only the last
        # line of an exception that carries notes.
        notes = getattr(err, "__notes__", None)
        if not notes:
            raise
        raise AssertionError("\n".join([str(err), *notes])) from None


def _argument_names(fn: Transformed[..., Any]) -> list[str]:
    sig = fn.signature
    params = sig.core.params if sig is not None else None
    n = sig.num_inputs if sig is not None else 0
    return list(params or ()) + [f"arg{i}" for i in range(len(params or ()), n)]


def _check_one(fn: Transformed[..., Any], args: tuple[Any, ...], real_run: bool) -> None:
    """One drawn call: JAX accepts it, predict agrees, and so does a real run."""
    try:
        jax.eval_shape(fn._jax_fn, *args)
    except Exception as err:
        raise AssertionError(
            f"JAX refuses shapes that satisfy the declared signature {fn.signature}: {type(err).__name__}: {err}"
        ) from err
    pred = assert_predicts_jax(fn, *args)
    if pred is None:  # unreachable: JAX accepted, so assert_predicts_jax demands a prediction
        raise AssertionError("axischeck refuses shapes that JAX accepts")
    if not real_run or fn._predicts_only():
        return
    arrays = [jnp.ones(a.shape, a.dtype) for a in args]
    try:
        out = fn(*arrays)
    except Exception as err:  # a checked call's AxisCheckError, or the function's own
        raise AssertionError(f"the real call raises {type(err).__name__}: {err}") from err
    got = jax.tree_util.tree_map(lambda a: format_shape(tuple(a.shape)), out)
    want = jax.tree_util.tree_map(format_shape, pred.shapes)
    if got != want:
        raise AssertionError(f"the real call returns {got}, but the prediction is {want}")
