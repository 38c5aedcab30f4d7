# ruff: noqa
"""Correct code in the styles real JAX code uses: the linter must stay silent here."""

import functools
from functools import partial
from typing import Annotated

import jax
import jax.numpy as jnp
from jax import lax
from jax import vmap as vm
from jaxtyping import Array, Float

import axischeck as ax


def scale(x, w):
    return x * w


def add3(x, y, z=1.0):
    return x + y + z


def total(*xs):
    return sum(xs)


def head(x, *rest, flag=False):
    return x


# Nested vmaps: the outer one maps the inner one's result, same parameters.
pairwise = jax.vmap(jax.vmap(scale, in_axes=(None, 0)), in_axes=(0, None))


# partial decorators, with None entries and defaults.
@partial(jax.vmap, in_axes=(0, None))
def rows(x, w):
    return x @ w


@functools.partial(jax.vmap, in_axes=(0, None, None))
def with_default(x, y, z=2.0):
    return x * y * z


# Fewer entries than parameters: the rest is passed by keyword (mapped over axis 0).
@partial(jax.vmap, in_axes=(0,))
def keyword_rest(x, w):
    return x * w


keyword_rest(jnp.ones((3, 4)), w=jnp.ones((3, 4)))


# *args: any number of entries at least the required ones.
summed = jax.vmap(total, in_axes=(0, 0, None))
first = jax.vmap(head, in_axes=(0, None, None, None))


# dict / pytree in_axes inside the tuple, and None entries.
def apply(params, x):
    return params["w"] @ x + params["b"]


batched_apply = jax.vmap(apply, in_axes=({"w": None, "b": None}, 0))
tree_axes = jax.vmap(lambda p, x: p[0] * x + p[1], in_axes=((None, 0), 0))
everything_none = jax.vmap(lambda x, y: x + y, in_axes=(None, 0))


class Model:
    def __init__(self, w):
        self.w = w

    # Methods decorated in the class body: None for self.
    @partial(jax.vmap, in_axes=(None, 0))
    def __call__(self, x):
        return self.w * x

    @partial(jax.vmap, in_axes=(None, 0, None))
    def predict(self, x, temperature=1.0):
        return self.w * x / temperature

    def batched(self, xs):
        # A bound method: self is not counted.
        return jax.vmap(self.one, in_axes=(0, None))(xs, 2.0)

    def one(self, x, scale):
        return self.w * x * scale

    @staticmethod
    @partial(jax.vmap, in_axes=(0, None))
    def helper(x, w):
        return x * w


def closures(w):
    def inner(x):
        return x * w

    return jax.vmap(inner)(jnp.ones(3)), vm(lambda x, y: x + y, (0, None))(jnp.ones(3), 1.0)


def lambdas():
    return jax.vmap(lambda x, y=1: x * y, in_axes=(0,))(jnp.ones(3))


def outputs():
    def two(x):
        return x, 2 * x

    a = jax.vmap(two, out_axes=(0, 1))(jnp.ones((3, 4)))
    b = jax.vmap(two, out_axes=0)(jnp.ones((3, 4)))
    c = jax.vmap(lambda x: (x, 2.0), out_axes=(0, None))  # None for an output that does not depend on the batch
    return a, b, c


def annotated(x: Float[Array, "n d"], y: Annotated[jax.Array, "d"]) -> Float[Array, "n"]:
    return x @ y


ranked = jax.vmap(annotated, in_axes=(2, -2), out_axes=-1)
ranked_sig = ax.vmap(annotated, in_axes=(0, None), signature="(n,d),(d)->(n)")


@ax.vmap(in_axes=(0, None))
def project(x: Annotated[jax.Array, "i"], w: Annotated[jax.Array, "i o"]) -> Annotated[jax.Array, "o"]:
    return x @ w


def grads(params, x):
    return jax.vmap(jax.grad(lambda p, xi: (p * xi).sum()), in_axes=(None, 0))(params, x)


def jitted():
    f = jax.jit(jax.vmap(scale, in_axes=(0, None)))
    return f(jnp.ones((3, 4)), jnp.ones(4)), f.lower(jnp.ones((3, 4)), jnp.ones(4))


def call_sites():
    g = jax.vmap(add3, in_axes=(0, None))
    h = jax.vmap(add3, in_axes=(0, None, 0))
    return g(jnp.ones(3), 1.0), g(jnp.ones(3), 1.0, z=jnp.ones(3)), h(jnp.ones(3), 1.0, jnp.ones(3))


def bad_but_tested():
    # Code written to fail, inside pytest.raises: not reported.
    import pytest

    f = jax.vmap(scale, in_axes=(0, None, 0))
    with pytest.raises(ValueError):
        f(jnp.ones(3), 1.0)


def ignored():
    return jax.vmap(scale, in_axes=(0, None, 0))  # axischeck: ignore[AX001]


def ignored_all():
    return jax.vmap(scale, in_axes=(0, "w"))  # axischeck: ignore


class Scaler:
    @partial(jax.vmap, in_axes=(None, 0))
    def apply(self, x):
        return 2 * x

    def twice(self, x):
        return self.apply(self.apply(x))


def unrelated(module, params, x, y):
    # Another object's .apply (a flax module, say): not Scaler.apply, not checked against it.
    return module.apply(params, x, y), Scaler().apply(x)


def docs_in_annotated(lr: Annotated[float, "the learning rate"], x):
    return lr * x


learning = jax.vmap(docs_in_annotated, in_axes=(None, 0))


def _apply(x, activation):
    return activation(x)


def function_passed_whole():
    """A function given the in_axes entry None (vmap passes it whole), or static (pmap)."""
    jax.vmap(_apply, in_axes=(0, None))(jnp.ones((4, 3)), jax.nn.relu)
    jax.pmap(_apply, static_broadcasted_argnums=(1,))(jnp.ones((1, 3)), jnp.tanh)
    return jax.vmap(_apply, in_axes=(0, None))(jnp.ones((4, 3)), jnp.pi)


class Gain:
    """A class registered as a pytree after its body: its self is mapped on purpose."""

    def __init__(self, g):
        self.g = g

    @jax.vmap
    def apply(self, x):
        return self.g * x


jax.tree_util.register_pytree_node(Gain, lambda s: ((s.g,), None), lambda _, c: Gain(*c))


class ops:
    """A namespace of mapped functions: no self."""

    @jax.vmap
    def outer(a, b):
        return a * b


@jax.tree_util.Partial
def _halve(x):
    return x / 2


def partial_passed_mapped():
    """A `Partial` is a pytree (its function static): mapped, it maps nothing."""
    return jax.vmap(_apply)(jnp.ones((4, 3)), _halve), Gain(jnp.arange(4.0)).apply(jnp.ones(4))
