import jax
import jax.numpy as jnp


def peak_to_peak(signal):
    return jnp.max(signal) - jnp.min(signal)


def main():
    # readings[t, s, c]: 4 time steps, 3 sensors, 2 components per sensor
    t = jnp.arange(4.0)[:, None, None]
    s = jnp.arange(3.0)[None, :, None]
    c = jnp.arange(2.0)[None, None, :]
    readings = jnp.sin(t * (s + 1.0) + c)
    # one range per sensor (the sensors were the last axis of the old (time, sensor) table)
    return jax.vmap(peak_to_peak, in_axes=-1)(readings)
