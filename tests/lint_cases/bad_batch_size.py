# ruff: noqa
"""AX013: the mapped axes of the arguments disagree on the batch size.

Shapes the file states (array constructors, NumPy's random generators, reshape, stack),
held in names bound once and passed to a transform whose in_axes map them.
"""

from functools import partial

import jax
import jax.numpy as jnp
import numpy as np

import axischeck as ax

rng = np.random.default_rng(0)
KEY = jax.random.PRNGKey(0)

features = jnp.ones((10, 4))
labels = rng.normal(size=(10, 2))
grid = jnp.arange(32.0).reshape(8, 4)


def loss(x, y):
    return (x.sum() - y.sum()) ** 2


def first(batch):
    return batch["x"].sum() + batch["y"].sum()


def case_constants():
    return jax.vmap(loss)(features, grid)  # expect: AX013


def case_dict_pytree():
    batch = {"x": features, "y": jax.random.normal(KEY, (5, 3))}
    return jax.vmap(first)(batch)  # expect: AX013


def case_in_axes_picks_the_other_axis():
    return jax.vmap(loss, in_axes=(1, 0))(features, labels)  # expect: AX013


def case_full_and_stack():
    rows = jnp.stack([jnp.zeros(3), jnp.zeros(3)])  # shape (2, 3)
    return ax.vmap(loss)(jnp.full(3, 0.5), rows)  # expect: AX013


def case_axis_size():
    return jax.vmap(loss, in_axes=(None, 0), axis_size=3)(1.0, features)  # expect: AX013


def case_partial():
    run = partial(jax.vmap(loss, in_axes=(0, 0)), features)
    return run(jnp.zeros((7, 2)))  # expect: AX013


def case_pmap():
    return jax.pmap(loss)(jnp.ones((2, 3)), jnp.ones((4, 3)))  # expect: AX013


def case_scaled_arrays_and_a_gradient():
    w = jnp.arange(6.0).reshape(3, 2) / 10.0
    xs = jnp.arange(24.0).reshape(8, 3) * 0.5 + 1.0
    return jax.vmap(jax.grad(loss))(w, xs)  # expect: AX013


if __name__ == "__main__":
    case_scaled_arrays_and_a_gradient()
    case_constants()
    case_dict_pytree()
    case_in_axes_picks_the_other_axis()
    case_full_and_stack()
    case_axis_size()
    case_partial()
    case_pmap()
