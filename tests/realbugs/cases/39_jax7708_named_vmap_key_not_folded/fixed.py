import jax
import jax.numpy as jnp


def loss(key, params, x):
    key = jax.random.fold_in(key, jax.lax.axis_index("batch"))
    noisy = x + 0.1 * jax.random.normal(key, x.shape)
    return jnp.sum((noisy * params) ** 2)


def main():
    xs = jnp.ones((8, 3))
    average = jax.vmap(loss, in_axes=(None, None, 0), axis_name="batch")
    return average(jax.random.key(0), jnp.full((3,), 0.5), xs)
