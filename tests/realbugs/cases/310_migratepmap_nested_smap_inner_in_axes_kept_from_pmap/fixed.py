from functools import partial

import jax
import jax.numpy as jnp
from jax.sharding import AxisType


# Was: @partial(jax.pmap, axis_name="i") over @partial(jax.pmap, axis_name="j").
@partial(jax.smap, in_axes=0, out_axes=0, axis_name="i")
@partial(jax.smap, in_axes=1, out_axes=1, axis_name="j")
def normalize(x):
    return x / jax.lax.psum(jnp.sum(x), ("i", "j"))


def main():
    mesh = jax.make_mesh((4, 2), ("i", "j"), axis_types=(AxisType.Auto,) * 2)
    x = jnp.arange(1.0, 4 * 2 * 3 + 1.0).reshape(4, 2, 3)
    with jax.set_mesh(mesh):
        return normalize(x)
