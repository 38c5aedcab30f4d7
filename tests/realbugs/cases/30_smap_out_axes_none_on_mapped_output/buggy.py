import jax
import jax.numpy as jnp
from jax.sharding import AxisType


def double(x):
    return x * 2.0


def main():
    mesh = jax.make_mesh((4,), ("x",), axis_types=(AxisType.Auto,))
    with jax.set_mesh(mesh):
        return jax.smap(double, in_axes=0, out_axes=None, axis_name="x")(jnp.arange(8.0))
