import jax
import jax.numpy as jnp


def augment(key, column):
    key_noise, key_scale = jax.random.split(key)
    scale = jax.random.uniform(key_scale, minval=0.9, maxval=1.1)
    return scale * column + 0.05 * jax.random.normal(key_noise, column.shape)


def main():
    features = jnp.arange(24.0).reshape(3, 8) / 8.0
    keys = jax.random.split(jax.random.PRNGKey(0), 8)
    return jax.vmap(augment, in_axes=(0, -1), out_axes=-1)(keys, features)
