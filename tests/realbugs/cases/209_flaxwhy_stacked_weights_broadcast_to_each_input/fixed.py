import jax
import jax.numpy as jnp
from flax import nnx


class Weights(nnx.Module):
    def __init__(self, kernel, bias):
        self.kernel, self.bias = nnx.Param(kernel), nnx.Param(bias)


def create_weights(seed):
    return Weights(kernel=jax.random.uniform(jax.random.key(seed), (2, 3)), bias=jnp.zeros((3,)))


def vector_dot(weights, x):
    assert weights.kernel.ndim == 2, "Batch dimensions not allowed"
    assert x.ndim == 1, "Batch dimensions not allowed"
    return x @ weights.kernel + weights.bias


def main():
    seeds = jnp.arange(10)
    weights = nnx.vmap(create_weights, in_axes=0, out_axes=0)(seeds)
    x = jax.random.normal(jax.random.key(1), (10, 2))
    return nnx.vmap(vector_dot, in_axes=(0, 0), out_axes=1)(weights, x)
