import jax
import jax.numpy as jnp
from flax import nnx


class Count(nnx.Variable):
    pass


class Weights(nnx.Module):
    def __init__(self, kernel, count):
        self.kernel = nnx.Param(kernel)
        self.count = Count(count)


def forward(weights, x):
    weights.count[...] += 1
    return x @ weights.kernel


def main():
    weights = Weights(
        kernel=jax.random.uniform(jax.random.key(0), (10, 2, 3)),
        count=jnp.array(0),  # one scalar counter, not one per member
    )
    x = jax.random.normal(jax.random.key(1), (10, 2))
    state_axes = nnx.StateAxes({nnx.Param: 0, ...: None})  # vectorize the kernels, broadcast the rest
    y = nnx.vmap(forward, in_axes=(state_axes, 0), out_axes=1)(weights, x)
    return y, weights.count[...]
