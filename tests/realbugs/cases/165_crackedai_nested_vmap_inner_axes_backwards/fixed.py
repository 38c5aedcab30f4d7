import jax
import jax.numpy as jnp


def rbf(x, y):
    return jnp.exp(-0.5 * jnp.sum((x - y) ** 2))


def main():
    X = jnp.linspace(-1.0, 1.0, 15).reshape(5, 3)
    Y = jnp.linspace(0.0, 2.0, 12).reshape(4, 3)
    kernel_matrix = jax.vmap(jax.vmap(rbf, in_axes=(None, 0)), in_axes=(0, None))
    return kernel_matrix(X, Y)
