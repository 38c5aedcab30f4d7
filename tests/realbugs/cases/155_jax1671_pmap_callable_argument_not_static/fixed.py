import jax
import jax.numpy as jnp


def scaled_activation(x, activation):
    return 2.0 * activation(x) - x


def main():
    n = jax.local_device_count()
    x = jnp.arange(n * 3, dtype=jnp.float32).reshape(n, 3) / 10.0
    return jax.pmap(scaled_activation, static_broadcasted_argnums=(1,))(x, jax.nn.softplus)
