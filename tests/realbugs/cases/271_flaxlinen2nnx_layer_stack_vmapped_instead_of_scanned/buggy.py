import jax
import jax.numpy as jnp
from flax import nnx


class Block(nnx.Module):
    def __init__(self, features, rngs):
        self.linear = nnx.Linear(features, features, rngs=rngs)

    def __call__(self, x):
        return jax.nn.relu(self.linear(x))


class MLP(nnx.Module):
    def __init__(self, features, num_layers, rngs):
        @nnx.split_rngs(splits=num_layers)
        @nnx.vmap(in_axes=(0,), out_axes=0)
        def create_block(rngs):
            return Block(features, rngs=rngs)

        self.blocks = create_block(rngs)

    def __call__(self, x):
        @nnx.vmap(in_axes=(None, 0), out_axes=0)
        def forward(x, block):
            return block(x)

        return forward(x, self.blocks)[-1]  # the output of the last block


def main():
    model = MLP(4, num_layers=3, rngs=nnx.Rngs(0))
    x = jnp.linspace(-1.0, 1.0, 8).reshape(2, 4)
    return model(x)
