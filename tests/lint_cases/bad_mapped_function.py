# ruff: noqa
"""AX026: a function passed where in_axes maps an argument: a map takes arrays (or pytrees
of them), and a function is neither; JAX raises TypeError 'is not a valid JAX type'
(jax#1671: an activation passed to a pmapped layer)."""

import jax
import jax.numpy as jnp


def scaled(x, activation):
    return activation(x) * 2.0


def halve(x):
    return x / 2


def case_activation_of_jax_nn():
    return jax.pmap(scaled)(jnp.ones((1, 3)), jax.nn.softplus)  # expect: AX026


def case_function_of_the_file():
    return jax.vmap(scaled)(jnp.ones((4, 3)), halve)  # expect: AX026


def case_lambda():
    return jax.vmap(scaled, in_axes=(0, 0))(jnp.ones((4, 3)), lambda x: x + 1)  # expect: AX026


def case_numpy_function():
    return jax.pmap(scaled, in_axes=(0, 0))(jnp.ones((1, 3)), jnp.tanh)  # expect: AX026


if __name__ == "__main__":
    case_activation_of_jax_nn()
