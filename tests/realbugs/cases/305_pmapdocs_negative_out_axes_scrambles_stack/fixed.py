import jax
import jax.numpy as jnp


def standardize(block):
    # block: one sensor's readings, (time steps, channels)
    return (block - block.mean(axis=0, keepdims=True)) / (block.std(axis=0, keepdims=True) + 1e-6)


def main():
    # 4 sensors, one per device, each with 3 time steps of 2 channels.
    readings = jnp.cos(jnp.arange(4 * 3 * 2, dtype=jnp.float32) * 0.9).reshape(4, 3, 2)
    # Downstream code expects (time steps, channels, sensors): the sensor axis last.
    return jax.pmap(standardize, out_axes=2)(readings)
