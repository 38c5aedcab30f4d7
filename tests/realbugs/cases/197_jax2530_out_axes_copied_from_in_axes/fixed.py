import jax
import jax.numpy as jnp


def center(x, mean):
    return x - mean


def main():
    xs = jnp.arange(15.0).reshape(5, 3)
    mean = jnp.mean(xs, axis=0)
    return jax.vmap(center, in_axes=(0, None), out_axes=0)(xs, mean)
