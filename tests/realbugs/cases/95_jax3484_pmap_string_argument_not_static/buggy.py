import jax
import jax.numpy as jnp


def dense_layer(x, activation):
    z = 2.0 * x - 1.0
    if activation == "tanh":
        return jnp.tanh(z)
    return jax.nn.relu(z)


def main():
    x = jnp.arange(8.0).reshape(4, 2) / 8.0
    return jax.pmap(dense_layer)(x, "tanh")
