import jax
import jax.numpy as jnp


def fun(scale, x):
    # per-example: the scaled sum of one row
    return jnp.sum(x) * scale


def main():
    x = jnp.arange(4 * 8, dtype=jnp.float32).reshape(4, 8)
    scale = jnp.array(2.0)
    per_example = jax.vmap(fun, in_axes=(None,))
    return per_example(scale, x=x)
