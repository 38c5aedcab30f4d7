import jax
import jax.numpy as jnp


def process_single_example(x, weights):
    # x: ONE example of 3 features
    return jnp.tanh(x @ weights)


def main():
    weights = jnp.linspace(-1.0, 1.0, 6).reshape(3, 2)
    batched = jax.vmap(process_single_example, in_axes=(0, None))
    example = jnp.array([0.5, -1.0, 2.0])  # a single example, no batch axis
    return batched(example[None, :], weights)
