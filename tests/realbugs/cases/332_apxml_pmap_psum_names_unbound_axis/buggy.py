import jax
import jax.numpy as jnp
from jax import lax


def scaled_sum(x):
    # the collective names the axis 'devices'
    return lax.psum(x * 2.0, axis_name="devices")


def main():
    data = jnp.arange(4, dtype=jnp.float32)
    return jax.pmap(scaled_sum, axis_name="batch")(data)
