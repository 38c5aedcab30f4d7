import jax
import jax.numpy as jnp


def augment(key, column):
    scale = jax.random.uniform(key, minval=0.9, maxval=1.1)
    return scale * column


def main():
    features = jnp.arange(24.0).reshape(3, 8) / 8.0  # features x samples: the batch is last
    keys = jax.random.split(jax.random.key(0), 8)  # was jax.random.PRNGKey(0), keys uint32[8, 2]
    return jax.vmap(augment, in_axes=(-2, -1), out_axes=-1)(keys, features)
