import jax
import jax.numpy as jnp
from jax.sharding import AxisType


def layer(x, w):
    return jnp.tanh(x @ w)


def main():
    n = jax.device_count()
    mesh = jax.make_mesh((n,), ("batch",), axis_types=(AxisType.Auto,))
    x = jnp.linspace(-1.0, 1.0, 2 * n * 8).reshape(2 * n, 8)
    w = jnp.sin(jnp.arange(8 * 8, dtype=jnp.float32)).reshape(8, 8)
    with jax.set_mesh(mesh):
        return jax.smap(layer, in_axes=0, out_axes=0, axis_name="batch")(x, w)
