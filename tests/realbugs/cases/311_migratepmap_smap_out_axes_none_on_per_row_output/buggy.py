import jax
import jax.numpy as jnp
from jax.sharding import AxisType


def add_bias(x, y):
    # x: this instance's row of the batch; y: the bias shared by every row
    return x + y


def main():
    mesh = jax.make_mesh((8,), ("i",), axis_types=(AxisType.Auto,))
    x = jnp.arange(8 * 4, dtype=jnp.float32).reshape(8, 4)
    y = jnp.array([[0.5, -1.0, 2.0, 0.25]], dtype=jnp.float32)
    with jax.set_mesh(mesh):
        f = jax.smap(add_bias, in_axes=(0, None), out_axes=None, axis_name="i")
        return f(x, y)
