import jax
import jax.numpy as jnp


def init(x, key):
    w = jax.random.normal(key, (2,))
    return x * w.sum(), w


def main():
    xs = jnp.arange(3.0)
    keys = jax.random.split(jax.random.key(0), 3)
    return jax.vmap(init, in_axes=(0, 0), out_axes=(0, None))(xs, keys)
