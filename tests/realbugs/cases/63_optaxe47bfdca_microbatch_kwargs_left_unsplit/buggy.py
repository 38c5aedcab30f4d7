import jax
import jax.numpy as jnp


def row_total(x, *, y):
    return jnp.sum(x + y)


def micro_vmap(fun, microbatch_size):
    def per_chunk(chunk, kwargs):
        return jax.vmap(fun)(chunk, **kwargs)

    def wrapped(x, **kwargs):
        chunks = x.reshape(-1, microbatch_size, *x.shape[1:])
        return jax.vmap(per_chunk, in_axes=(0, None))(chunks, kwargs).reshape(-1)

    return wrapped


def main():
    x = jnp.arange(32.0).reshape(4, 8)
    y = jnp.arange(32.0, 64.0).reshape(4, 8)
    return micro_vmap(row_total, microbatch_size=2)(x, y=y)
