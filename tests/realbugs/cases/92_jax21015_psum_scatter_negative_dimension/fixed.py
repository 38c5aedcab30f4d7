import jax
import jax.numpy as jnp


def reduce_columns(block):
    return jax.lax.psum_scatter(block, "i", scatter_dimension=1, tiled=True)


def main():
    x = jnp.arange(64.0).reshape(4, 2, 8)
    return jax.pmap(reduce_columns, axis_name="i")(x)
