# ruff: noqa
"""AX014: in_axes asks for an axis that the argument's stated shape does not have.

A batched argument of rank r can be mapped over an axis in [-r, r); the shape comes from
the constructor that built it, not from an annotation (that is AX009).
"""

import jax
import jax.numpy as jnp
import numpy as np

AXES = (None, 1)


def scale(w, x):
    return w * x


def total(x):
    return x.sum()


def case_axis_two_of_a_matrix():
    return jax.vmap(scale, in_axes=(None, 2))(1.0, jnp.ones((10, 4)))  # expect: AX014


def case_module_constant():
    return jax.vmap(scale, in_axes=AXES)(2.0, jnp.linspace(0.0, 1.0, 5))  # expect: AX014


def case_negative_axis():
    return jax.vmap(total, in_axes=-3)(np.random.randn(4, 5))  # expect: AX014


def case_scalar_bounds():
    # truncated_normal without a shape draws the bounds' shape: two numbers, one number.
    return jax.vmap(total)(jax.random.truncated_normal(jax.random.key(0), -2.0, 2.0))  # expect: AX014


def run(x, axis=1):
    return jax.vmap(total, in_axes=axis)(x)  # expect: AX014


def case_default_parameter():
    return run(jnp.zeros(6))


def case_transposed():
    return jax.vmap(total, in_axes=2)(jnp.eye(3).T)  # expect: AX014


def shift(params, c):
    return params["a"] + params["b"] + c


def case_scalar_leaf_of_a_dict():
    params = {"a": jnp.float32(5.0), "b": jnp.arange(5.0) / 2.0}
    return jax.vmap(shift, in_axes=(0, None))(params, 1.0)  # expect: AX014


if __name__ == "__main__":
    case_scalar_leaf_of_a_dict()
    case_axis_two_of_a_matrix()
    case_module_constant()
    case_negative_axis()
    case_default_parameter()
    case_transposed()
    case_scalar_bounds()
