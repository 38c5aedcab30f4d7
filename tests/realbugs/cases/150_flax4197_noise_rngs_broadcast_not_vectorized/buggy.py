import jax
import jax.numpy as jnp
from flax import nnx


class Weights(nnx.Module):
    def __init__(self, kernel, bias, seed):
        self.kernel, self.bias = nnx.Param(kernel), nnx.Param(bias)
        self.rngs = nnx.Rngs(noise=seed)


def noisy_vector_dot(weights, x):
    assert x.ndim == 1, "written for one example"
    y = x @ weights.kernel[...] + weights.bias[...]
    return y + jax.random.normal(weights.rngs.noise(), y.shape)


def main():
    weights = Weights(
        kernel=jax.random.uniform(jax.random.key(0), (2, 3)),
        bias=jnp.zeros((3,)),
        seed=jax.random.split(jax.random.key(0), 6),
    )
    x = jax.random.normal(jax.random.key(1), (6, 2))
    return nnx.vmap(noisy_vector_dot, in_axes=(None, 0))(weights, x)
