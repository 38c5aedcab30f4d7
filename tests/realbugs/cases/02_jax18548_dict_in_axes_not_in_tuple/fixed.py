import jax
import jax.numpy as jnp


def pick(x):
    return x["a"] * 2.0


def main():
    batch = {"a": jnp.arange(9.0).reshape(3, 3)}
    return jax.vmap(pick, in_axes=({"a": 0},))(batch)
