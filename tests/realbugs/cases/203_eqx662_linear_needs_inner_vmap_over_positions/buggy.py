import equinox as eqx
import jax
import jax.numpy as jnp


def main():
    key = jax.random.PRNGKey(0)
    # A batch laid out as (batch, channels, height * width).
    inputs = jnp.arange(3 * 16 * 64.0).reshape(3, 16, 64) / 1000.0
    mix_channels = eqx.nn.Linear(16, 16, use_bias=True, key=key)
    return eqx.filter_vmap(mix_channels)(inputs)
