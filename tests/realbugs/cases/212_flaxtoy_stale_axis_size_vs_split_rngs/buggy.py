import jax.numpy as jnp
from flax import nnx


class Block(nnx.Module):
    def __init__(self, dim, rngs):
        self.linear = nnx.Linear(dim, dim, rngs=rngs)


class MLP(nnx.Module):
    def __init__(self, dim, n_layers, rngs):
        self.n_layers = n_layers

        @nnx.split_rngs(splits=n_layers)
        @nnx.vmap(axis_size=3)
        def create_block(rngs):
            return Block(dim, rngs)

        self.blocks = create_block(rngs)

    def __call__(self, x):
        kernels, biases = self.blocks.linear.kernel[...], self.blocks.linear.bias[...]
        for i in range(self.n_layers):
            x = jnp.tanh(x @ kernels[i] + biases[i])
        return x


def main():
    model = MLP(4, n_layers=5, rngs=nnx.Rngs(0))
    x = jnp.arange(4.0) / 4.0
    return model.blocks.linear.kernel[...], model(x)
