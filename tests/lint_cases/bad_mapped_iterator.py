# ruff: noqa
"""AX024: an iterator passed where in_axes maps an argument: vmap maps arrays (or pytrees
of them), and an iterator is neither; JAX raises TypeError 'is not a valid JAX type'."""

import jax
import jax.numpy as jnp


def dot(pair):
    x, y = pair
    return x @ y


def norm(x):
    return jnp.sqrt(jnp.sum(x * x))


def case_zip_of_two_batches():
    xs, ys = jnp.ones((4, 3)), jnp.ones((4, 3))
    return jax.vmap(dot)(zip(xs, ys))  # expect: AX024


def case_generator():
    xs = [jnp.ones(3) * i for i in range(4)]
    return jax.vmap(norm)(x for x in xs)  # expect: AX024


def case_map():
    xs = [jnp.ones(3) * i for i in range(4)]
    return jax.vmap(norm)(map(jnp.abs, xs))  # expect: AX024


if __name__ == "__main__":
    case_zip_of_two_batches()
