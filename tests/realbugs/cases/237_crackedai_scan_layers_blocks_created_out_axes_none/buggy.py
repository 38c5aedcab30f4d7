import jax
import jax.numpy as jnp
from flax import nnx


class Block(nnx.Module):
    def __init__(self, dim, rngs):
        self.linear = nnx.Linear(dim, dim, rngs=rngs)

    def __call__(self, x):
        return jax.nn.relu(self.linear(x))


class Stack(nnx.Module):
    def __init__(self, dim, num_layers, rngs):
        self.num_layers = num_layers

        @nnx.split_rngs(splits=num_layers)
        @nnx.vmap(in_axes=(0,), out_axes=None)
        def create_blocks(rngs):
            return Block(dim, rngs)

        self.blocks = create_blocks(rngs)

    def __call__(self, x):
        kernels = self.blocks.linear.kernel[...]
        biases = self.blocks.linear.bias[...]
        for i in range(self.num_layers):
            x = jax.nn.relu(x @ kernels[i] + biases[i])
        return x


def main():
    model = Stack(4, num_layers=3, rngs=nnx.Rngs(0))
    x = jnp.linspace(-1.0, 1.0, 4)
    return model.blocks.linear.kernel[...], model(x)
