import jax
import jax.numpy as jnp
from jax.sharding import AxisType


def normalize_rows(x):
    # each row of the block becomes a probability vector
    return x / jnp.sum(x, axis=1, keepdims=True)


def main():
    mesh = jax.make_mesh((4,), ("i",), axis_types=(AxisType.Auto,))
    x = jnp.arange(1.0, 65.0).reshape(8, 8)
    f = jax.smap(normalize_rows, in_axes=0, out_axes=0, axis_name="i")
    with jax.set_mesh(mesh):
        return f(x)
