import jax
import jax.numpy as jnp


def model(inputs):
    strain, temperature = inputs
    return jnp.sum(strain**2) * (1.0 + 0.1 * temperature)


def main():
    strain = jnp.arange(12.0).reshape(4, 3) / 10.0
    temperature = jnp.arange(4.0)
    data = (strain, temperature)
    return jax.vmap(model, in_axes=(0, 0))(data)
