import jax
import jax.numpy as jnp


def signal_energy(signal):
    return jnp.sum(signal**2) / signal.shape[0]


def main():
    # six time steps (rows) for three sensors (columns)
    readings = jnp.arange(18.0).reshape(6, 3) / 6.0
    return jax.vmap(signal_energy)(readings)
