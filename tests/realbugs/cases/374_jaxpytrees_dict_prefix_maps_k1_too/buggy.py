import jax
import jax.numpy as jnp


def f(offset, inputs):
    # k1: per-feature weights shared by every example; k2: one example's features
    return inputs["k1"] * inputs["k2"] + offset


def main():
    inputs = {
        "k1": jnp.array([1.0, 10.0, 100.0]),
        "k2": jnp.arange(9.0).reshape(3, 3),
    }
    # only the examples in k2 are meant to be mapped
    return jax.vmap(f, in_axes=(None, 0))(0.5, inputs)
