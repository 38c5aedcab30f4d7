import jax
import jax.numpy as jnp
from jax.sharding import AxisType


def total(x):
    return jax.lax.psum(x, "batch")


def main():
    mesh = jax.make_mesh((4,), ("x",), axis_types=(AxisType.Auto,))
    with jax.set_mesh(mesh):
        return jax.smap(total, in_axes=0, out_axes=0, axis_name="x")(jnp.arange(8.0))
