import jax
import jax.numpy as jnp
from flax import nnx


class Weights(nnx.Module):
    def __init__(self, kernel, bias):
        self.kernel = nnx.Param(kernel)
        self.bias = nnx.Param(bias)


def vector_dot(weights, x):
    return weights.kernel[...] @ x + weights.bias[...]


def main():
    weights = Weights(
        kernel=jax.random.uniform(jax.random.key(2), (4, 4)),  # one kernel row per example
        bias=jnp.arange(4.0),
    )
    # the data arrive feature-major: shape (features, batch) = (4, 4)
    xt = jnp.arange(16.0).reshape(4, 4) / 8.0
    return nnx.vmap(vector_dot, in_axes=0)(weights, xt)
