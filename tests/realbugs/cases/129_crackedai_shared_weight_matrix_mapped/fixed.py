import jax
import jax.numpy as jnp


def project(weight, x):
    return weight @ x


def main():
    weight = jnp.arange(12.0).reshape(4, 3) / 12.0
    examples = jnp.arange(12.0).reshape(4, 3) / 6.0 - 1.0
    return jax.vmap(project, in_axes=(None, 0))(weight, examples)
