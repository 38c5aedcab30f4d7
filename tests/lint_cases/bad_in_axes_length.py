# ruff: noqa
"""AX001: in_axes with another number of entries than the positional arguments.

Each `case_*` function runs one mistake; `# expect:` marks the line the linter reports.
tests/test_lint.py also runs the cases for real and checks that the runtime raises.
"""

import functools
from functools import partial
from typing import Annotated

import jax
import jax.numpy as jnp
from jax import vmap as vm

import axischeck as ax


def scale(x, w):
    return x * w


def add3(x, y, z=1.0):
    return x + y + z


# Decorated with functools.partial at module level: three entries for two parameters.
@partial(jax.vmap, in_axes=(0, None, 0))  # expect: AX001
def dot_rows(x, w):
    return x @ w


# axischeck's factory form, with an annotation: one entry for two required parameters.
@ax.vmap(in_axes=(0,))  # expect: AX001
def project(x: Annotated[jax.Array, "i"], w: Annotated[jax.Array, "i o"]) -> Annotated[jax.Array, "o"]:
    return x @ w


class Layer:
    # A method decorated in its class body gets self: JAX counts it, so (0, None) misses one.
    @functools.partial(jax.vmap, in_axes=(0, None))  # expect: AX001
    def apply(self, x, w):
        return x * w

    def batched(self, x, w):
        # A bound method does not count self: three entries for two parameters.
        return jax.vmap(self.apply_one, in_axes=(None, 0, None))(x, w)  # expect: AX001

    def apply_one(self, x, w):
        return x * w


def case_jax_call():
    return jax.vmap(scale, in_axes=(0, None, None))(jnp.ones((3, 4)), jnp.ones(4))  # expect: AX001


def case_alias():
    f = vm(scale, (0,))  # expect: AX001
    return f(jnp.ones((3, 4)), jnp.ones((3, 4)))


def case_defaults():
    # Defaults: between 2 and 3 entries are fine, 4 never are.
    return jax.vmap(add3, in_axes=(0, 0, None, None))(jnp.ones(3), jnp.ones(3), 1.0)  # expect: AX001


def case_lambda():
    return jax.vmap(lambda x: x * 2, in_axes=(0, 0))(jnp.ones(3))  # expect: AX001


def case_call_site():
    g = jax.vmap(add3, in_axes=(0, None))
    return g(jnp.ones(3), 2.0, 3.0)  # expect: AX001


def case_partial_decorator():
    return dot_rows(jnp.ones((3, 4)), jnp.ones(4))


def case_ax_factory():
    return project(jnp.ones((3, 4)), jnp.ones((4, 2)))


def case_method():
    return Layer().apply(jnp.ones((3, 4)), jnp.ones(4))


def case_bound_method():
    return Layer().batched(jnp.ones(4), jnp.ones((3, 4)))


class Scaler:
    @partial(jax.vmap, in_axes=(None, 0))
    def apply(self, x):
        return 2 * x


def case_method_call_site():
    scaler = Scaler()
    return scaler.apply(jnp.ones(3), jnp.ones(3))  # expect: AX001


def case_pmap():
    return jax.pmap(scale, in_axes=(0, None, 0))(jnp.ones((2, 4)), jnp.ones(4))  # expect: AX001


def case_ax_pmap():
    return ax.pmap(scale, axis_name="i", in_axes=(0,))(jnp.ones((2, 4)), jnp.ones((2, 4)))  # expect: AX001


def combine(a, b, c, d):
    return a * b * c + d


def case_pmap_static_argument_without_an_entry():
    f = jax.pmap(combine, static_broadcasted_argnums=(2,), in_axes=(0, None, 0))  # expect: AX001
    return f(jnp.ones((2, 3)), jnp.arange(3.0), 2.0, jnp.ones((2, 3)))


if __name__ == "__main__":
    case_jax_call()
    case_alias()
    case_defaults()
    case_lambda()
    case_call_site()
    case_partial_decorator()
    case_ax_factory()
    case_method()
    case_bound_method()
    case_method_call_site()
    case_pmap()
    case_ax_pmap()
    case_pmap_static_argument_without_an_entry()
