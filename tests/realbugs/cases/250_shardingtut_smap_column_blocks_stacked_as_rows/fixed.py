import jax
import jax.numpy as jnp
from jax.sharding import AxisType


def column_block(x, w_cols):
    # x: (batch, d_in) on every device; w_cols: (d_in, d_out / n), this device's columns
    return x @ w_cols


def main():
    n = jax.device_count()
    mesh = jax.make_mesh((n,), ("model",), axis_types=(AxisType.Auto,))
    x = jnp.linspace(-1.0, 1.0, 3 * 4).reshape(3, 4)
    w = jnp.cos(jnp.arange(4 * 2 * n, dtype=jnp.float32)).reshape(4, 2 * n)
    with jax.set_mesh(mesh):
        return jax.smap(column_block, in_axes=(None, 1), out_axes=1, axis_name="model")(x, w)
