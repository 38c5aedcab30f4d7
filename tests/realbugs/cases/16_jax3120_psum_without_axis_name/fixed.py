import jax
import jax.numpy as jnp


def total(x):
    return jax.lax.psum(x, axis_name="batch")


def main():
    a = jnp.arange(4.0)[None, :]
    return jax.pmap(total, axis_name="batch")(a)
