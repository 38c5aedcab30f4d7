import jax
import jax.numpy as jnp


def share_of_total(weight):
    total = jax.lax.psum(weight, axis_name="batch")
    return weight / total


def main():
    weights = jnp.arange(1.0, 6.0)
    return jax.vmap(share_of_total, axis_name="batch")(weights)
