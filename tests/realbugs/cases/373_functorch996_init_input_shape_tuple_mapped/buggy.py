import jax
import jax.numpy as jnp


def init_fn(input_shape, seed):
    # one small classifier layer per seed: the input shape only sets the weight shape
    key = jax.random.PRNGKey(seed)
    w_key, b_key = jax.random.split(key)
    fan_in = input_shape[0]
    w = jax.random.normal(w_key, (fan_in, 4)) / jnp.sqrt(fan_in)
    b = 0.01 * jax.random.normal(b_key, (4,))
    return {"w": w, "b": b}


def main():
    seeds = jnp.arange(3)
    parallel_init_fn = jax.vmap(init_fn)
    return parallel_init_fn((2,), seeds)
