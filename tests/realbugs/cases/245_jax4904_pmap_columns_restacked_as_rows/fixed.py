import jax
import jax.numpy as jnp


def standardize(column):
    # each device gets one column (6 readings of one channel)
    return (column - column.mean()) / column.std()


def main():
    n = jax.local_device_count()
    table = jnp.sin(jnp.arange(6 * n, dtype=jnp.float32) * 0.7).reshape(6, n)
    return jax.pmap(standardize, in_axes=1, out_axes=1)(table)
