import jax
import jax.numpy as jnp


def apply(x, w):
    return w @ x


def main():
    w = jnp.arange(9.0).reshape(3, 3)
    xs = jnp.arange(9.0, 18.0).reshape(3, 3)
    return jax.vmap(apply)(xs, w=w)
