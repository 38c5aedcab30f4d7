# ruff: noqa
"""AX029: a mapped result combined with an argument it mapped, in another layout.

A Jax parallelization notebook maps x of shape (1, 3) along axis 1 and shows that the
default out_axes=0 returns (3, 1); added back to x, that broadcasts to the (3, 3) table of
every pair. Flax NNX's tests run blocks down the columns of their input with out_axes=1,
so that the outputs stay in the columns the residual adds them to.
"""

import jax
import jax.numpy as jnp
from flax import nnx


def shift(x, y):
    return x + y


def forward(block, x):
    return block(x)


def case_result_assigned_then_added(x, y):
    out = jax.vmap(shift, in_axes=(1, 0))(x, y)  # expect: AX029
    return x + out


def case_residual_of_blocks_in_columns(blocks, x):
    return x + nnx.vmap(forward, in_axes=(0, 1))(blocks, x)  # expect: AX029


def case_layout_kept_is_fine(x):
    return x + jax.vmap(jnp.sin, in_axes=1, out_axes=1)(x)


def case_rows_to_rows_is_fine(x):
    return x * jax.vmap(jnp.sin)(x)


def case_columns_to_rows_alone_is_fine(x):
    return jax.vmap(jnp.sin, in_axes=1)(x)


def case_another_array_is_fine(x, z):
    return z + jax.vmap(jnp.sin, in_axes=1)(x)
