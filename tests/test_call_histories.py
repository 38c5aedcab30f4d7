"""Caches are sound over any history of use (the rule in `axischeck._core._cache`).

A hypothesis state machine builds transforms (anew, or again from the same function and
options, so they share one predictor and its caches), predicts and calls them with
arguments whose answer depends on things besides array shapes (Python ints, strings,
dtypes, static arguments, JAX configuration), mutates what it was handed, and checks
after every step that the answer is JAX's own for that step: `jax.eval_shape` of JAX's
transform for predictions, JAX's values for calls, and the same refusal when JAX refuses.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

import axischeck as ax


def pad(x: jax.Array, n: int) -> jax.Array:
    return jnp.pad(x, (0, n))  # the output length depends on a Python int


def cast(x: jax.Array, dtype: str) -> jax.Array:
    return x.astype(dtype)  # the output dtype depends on a string


def tile(x: jax.Array, word: str) -> jax.Array:
    return jnp.tile(x, len(word))  # the output length depends on a string's length


def add(x: jax.Array, y: jax.Array) -> jax.Array:
    return x + y  # valid or not depending on jax_numpy_rank_promotion


def stats(x: jax.Array) -> dict[str, jax.Array]:
    return {"mean": x.mean(0), "sum": x.sum()}


def outer(x: jax.Array, y: jax.Array) -> jax.Array:
    return jnp.outer(x, y)


@dataclass(frozen=True)
class Case:
    """A function, its transform options, and how to draw its arguments."""

    fn: Callable[..., Any]
    options: dict[str, Any]
    args: Callable[[st.DrawFn, int], tuple[Any, ...]]


def _floats(*shape: int) -> jax.Array:
    return jnp.asarray(np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape))


CASES = {
    "pad": Case(
        pad,
        {"in_axes": (0, None)},
        lambda draw, b: (_floats(b, draw(st.integers(1, 3))), draw(st.integers(0, 3))),
    ),
    "cast": Case(
        cast,
        {"in_axes": (0, None)},
        lambda draw, b: (_floats(b, 2), draw(st.sampled_from(["float32", "int32", "float16", "bool"]))),
    ),
    "tile": Case(
        tile,
        {"in_axes": (0, None)},
        lambda draw, b: (_floats(b, 2), draw(st.text("ab", min_size=1, max_size=3))),
    ),
    "add": Case(
        add,
        {"in_axes": (0, 0)},
        lambda draw, b: (_floats(b, 2, 3), _floats(b, *draw(st.sampled_from([(3,), (2, 3), (2, 1)])))),
    ),
    "stats": Case(stats, {}, lambda draw, b: (_floats(b, draw(st.integers(1, 3)), 2),)),
    "outer": Case(
        outer,
        {"in_axes": (0, None), "signature": "(a),(b)->(a,b)"},
        lambda draw, b: (_floats(b, draw(st.integers(1, 3))), _floats(draw(st.integers(1, 3)))),
    ),
}

CONFIGS = ["raise", "allow"]  # jax_numpy_rank_promotion: part of JAX's trace context


def _jax_answer(case: Case, args: tuple[Any, ...], run: bool) -> Any:
    """JAX's own answer: the outputs (shapes, or values when `run`), or the exception type."""
    options = {k: v for k, v in case.options.items() if k != "signature"}
    dyn = [i for i, a in enumerate(args) if isinstance(a, jax.Array)]

    def with_static(*arrays: Any) -> Any:
        full = list(args)
        for i, a in zip(dyn, arrays, strict=True):
            full[i] = a
        return jax.vmap(case.fn, **options)(*full)

    try:
        if run:
            return jax.vmap(case.fn, **options)(*args)
        return jax.eval_shape(with_static, *[args[i] for i in dyn])
    except Exception as err:
        return type(err)


def _same(ours: Any, jaxs: Any) -> bool:
    if isinstance(jaxs, type):
        return isinstance(ours, type) and issubclass(ours, jaxs) if isinstance(ours, type) else False
    if isinstance(ours, type):
        return False
    ours_leaves, ours_def = jax.tree_util.tree_flatten(ours)
    jax_leaves, jax_def = jax.tree_util.tree_flatten(jaxs)
    return ours_def == jax_def and all(
        tuple(a.shape) == tuple(b.shape) and a.dtype == b.dtype and _equal_values(a, b)
        for a, b in zip(ours_leaves, jax_leaves, strict=True)
    )


def _equal_values(a: Any, b: Any) -> bool:
    if isinstance(a, jax.ShapeDtypeStruct) or isinstance(b, jax.ShapeDtypeStruct):
        return True
    return bool(np.array_equal(np.asarray(a), np.asarray(b)))


class CallHistories(RuleBasedStateMachine):
    """Every step's answer is JAX's, whatever came before it."""

    def __init__(self) -> None:
        super().__init__()
        self.transforms: dict[str, list[Any]] = {}
        self.handed_out: list[Any] = []

    @initialize()
    def start(self) -> None:
        for name, case in CASES.items():
            self.transforms[name] = [ax.vmap(case.fn, **case.options)]

    @rule(name=st.sampled_from(sorted(CASES)))
    def build_again(self, name: str) -> None:
        """Another transform of the same function and options: it shares the caches."""
        case = CASES[name]
        self.transforms[name].append(ax.vmap(case.fn, **case.options))

    @rule(data=st.data(), name=st.sampled_from(sorted(CASES)), config=st.sampled_from(CONFIGS))
    def predict(self, data: st.DataObject, name: str, config: str) -> None:
        case = CASES[name]
        f = data.draw(st.sampled_from(self.transforms[name]))
        args = case.args(data.draw, data.draw(st.integers(1, 3), label="batch"))
        structs = tuple(jax.ShapeDtypeStruct(a.shape, a.dtype) if isinstance(a, jax.Array) else a for a in args)
        with jax.numpy_rank_promotion(config):
            want = _jax_answer(case, args, run=False)
            try:
                pred = f.predict(*structs)
            except ax.AxisCheckError as err:
                assert isinstance(want, type), f"{name}{structs}: axischeck refused ({err}), JAX answered {want}"
                return
        assert not isinstance(want, type), f"{name}{structs}: axischeck predicted {pred.shapes}, JAX raised {want}"
        ours: Any = jax.tree_util.tree_map(tuple, pred.shapes)
        assert ours == jax.tree_util.tree_map(lambda s: tuple(s.shape), want), name
        self.handed_out.append(pred.shapes)

    @rule(data=st.data(), name=st.sampled_from(sorted(CASES)), config=st.sampled_from(CONFIGS))
    def call(self, data: st.DataObject, name: str, config: str) -> None:
        case = CASES[name]
        f = data.draw(st.sampled_from(self.transforms[name]))
        args = case.args(data.draw, data.draw(st.integers(1, 3), label="batch"))
        with jax.numpy_rank_promotion(config):
            want = _jax_answer(case, args, run=True)
            try:
                ours: Any = f(*args)
            except Exception as err:
                ours = type(err)
        assert _same(ours, want), f"{name}: axischeck gave {ours}, JAX {want}"

    @rule()
    def mutate_what_was_handed_out(self) -> None:
        """A user may change the pytree `predict` returned; later answers must not see it."""
        for shapes in self.handed_out:
            if isinstance(shapes, dict):
                shapes.pop("mean", None)
                shapes["junk"] = ax.Shape((99,))
        self.handed_out.clear()

    @invariant()
    def transforms_keep_their_function(self) -> None:
        for name, fs in self.transforms.items():
            for f in fs:
                assert f.__wrapped__ is CASES[name].fn and f.__name__ == CASES[name].fn.__name__


CallHistories.TestCase.settings = settings(max_examples=25, stateful_step_count=12, deadline=None)
test_call_histories = CallHistories.TestCase


@pytest.mark.parametrize("config", CONFIGS)
def test_the_configuration_is_part_of_the_key(config: str) -> None:
    f = ax.vmap(add)
    x, y = jax.ShapeDtypeStruct((4, 2, 3), jnp.float32), jax.ShapeDtypeStruct((4, 3), jnp.float32)
    other = "allow" if config == "raise" else "raise"
    with jax.numpy_rank_promotion(other):
        try:
            f.predict(x, y)
        except ax.AxisCheckError:
            pass
    with jax.numpy_rank_promotion(config):
        if config == "raise":
            with pytest.raises(ax.AxisCheckError):
                f.predict(x, y)
        else:
            assert f.predict(x, y).shapes == (4, 2, 3)
