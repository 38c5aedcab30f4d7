import jax
import jax.numpy as jnp


def vv(x, y):
    return jnp.dot(x, y)


def distributed_matrix_vector(x, y):
    # matrix-vector product, rows split over the devices and mapped row by row
    fv = lambda z: jax.lax.map(lambda row: vv(row, y), z)
    n = jax.device_count()
    return jax.pmap(fv)(x.reshape((n, -1) + x.shape[1:])).reshape(x.shape[0])


def main():
    x = jnp.sin(jnp.arange(32 * 5, dtype=jnp.float32)).reshape(32, 5)
    y = jnp.cos(jnp.arange(5, dtype=jnp.float32))
    # one entry per row of x: shape (32,)
    return distributed_matrix_vector(x, y)
