import jax
import jax.numpy as jnp


def row_total(x, *, y):
    return jnp.sum(x + y)


def micro_vmap(fun, microbatch_size):
    def per_chunk(chunk, kwargs):
        return jax.vmap(fun)(chunk, **kwargs)

    def split(a):
        return a.reshape(-1, microbatch_size, *a.shape[1:])

    def wrapped(x, **kwargs):
        kwarg_chunks = jax.tree.map(split, kwargs)
        return jax.vmap(per_chunk, in_axes=(0, 0))(split(x), kwarg_chunks).reshape(-1)

    return wrapped


def main():
    x = jnp.arange(32.0).reshape(4, 8)
    y = jnp.arange(32.0, 64.0).reshape(4, 8)
    return micro_vmap(row_total, microbatch_size=2)(x, y=y)
