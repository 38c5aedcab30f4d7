import jax
import jax.numpy as jnp


def apply_gain(frame, gain):
    return frame * gain


def main():
    signal = jnp.arange(16.0).reshape(4, 4)
    gains = 1.0 + jnp.arange(16.0).reshape(4, 4) / 10.0
    return jax.vmap(apply_gain, in_axes=(-1, 0), out_axes=-1)(signal, gains)
