import jax
import jax.numpy as jnp


def f(x, y):
    return jnp.sum(x) + jnp.sum(y)


def main():
    shared = jnp.arange(6.0).reshape(2, 3)
    batch = jnp.arange(6.0, 12.0).reshape(2, 3)
    # False meant "do not map x" (as None does)
    return jax.vmap(f, in_axes=[None, 0])(shared, batch)
