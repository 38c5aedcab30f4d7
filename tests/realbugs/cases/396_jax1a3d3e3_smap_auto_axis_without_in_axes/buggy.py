import jax
import jax.numpy as jnp
from jax.sharding import AxisType


def scale_rows(block):
    return block * 2.0


def main():
    mesh = jax.make_mesh((2,), ("x",), axis_types=(AxisType.Auto,))
    x = jnp.arange(8.0).reshape(4, 2)
    with jax.set_mesh(mesh):
        return jax.smap(scale_rows, out_axes=0, axis_name="x")(x)
