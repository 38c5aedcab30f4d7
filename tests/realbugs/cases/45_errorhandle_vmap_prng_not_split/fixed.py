import jax
import jax.numpy as jnp


def random_function(key, x):
    return jax.random.normal(key, shape=()) + x


def main():
    x_batch = jnp.array([1.0, 2.0, 3.0])
    key = jax.random.PRNGKey(42)
    keys = jax.random.split(key, num=len(x_batch))
    return jax.vmap(random_function, in_axes=(0, 0))(keys, x_batch)
