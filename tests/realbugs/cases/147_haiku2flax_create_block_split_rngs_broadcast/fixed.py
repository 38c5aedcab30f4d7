import jax
from flax import nnx


class Block(nnx.Module):
    def __init__(self, features, rngs):
        self.linear = nnx.Linear(features, features, rngs=rngs)

    def __call__(self, x):
        return jax.nn.relu(self.linear(x))


def create_stack(num_layers, features, rngs):
    @nnx.split_rngs(splits=num_layers)
    @nnx.vmap(in_axes=(0,), out_axes=0, axis_size=num_layers)
    def create_block(rngs):
        return Block(features, rngs)

    return create_block(rngs)


def main():
    blocks = create_stack(5, 4, nnx.Rngs(0))
    return blocks.linear.kernel[...], blocks.linear.bias[...]
