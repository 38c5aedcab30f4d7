import jax
import jax.numpy as jnp


def init_member(key, x, features=2):
    return jax.random.normal(key, (x.shape[0], features)) / jnp.sqrt(x.shape[0])


def apply_member(kernel, x):
    return x @ kernel


def main():
    signals = jnp.linspace(-1.0, 1.0, 12).reshape(3, 4)  # (features, members): member i reads column i
    keys = jax.random.split(jax.random.PRNGKey(3), 4)
    kernels = jax.vmap(init_member, in_axes=(0, 1))(keys, signals)
    # the layer's output keeps the input's layout: (out_features, members)
    return jax.vmap(apply_member, in_axes=(0, 1))(kernels, signals)
