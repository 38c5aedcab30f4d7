import jax.numpy as jnp
from flax import nnx


class LayerStack(nnx.Module):
    @nnx.split_rngs(splits=4)
    @nnx.vmap(in_axes=(None, 0))
    def __init__(self, rngs: nnx.Rngs):
        self.linear = nnx.Linear(3, 3, rngs=rngs)


def main():
    stack = LayerStack(nnx.Rngs(0))
    x = jnp.ones((3,))
    for i in range(4):
        x = jnp.tanh(x @ stack.linear.kernel[...][i] + stack.linear.bias[...][i])
    return stack.linear.kernel[...], x
