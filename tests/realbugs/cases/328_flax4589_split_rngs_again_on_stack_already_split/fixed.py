import jax.numpy as jnp
from flax import nnx


class Layer(nnx.Module):
    def __init__(self, rngs):
        self.linear = nnx.Linear(4, 4, rngs=rngs)
        self.dropout = nnx.Dropout(0.5, rngs=rngs)

    def __call__(self, x):
        return self.linear(self.dropout(x))


class Heads(nnx.Module):
    def __init__(self, rngs):
        @nnx.split_rngs(splits=3)
        @nnx.vmap(axis_size=3)
        def create_layer(rngs):
            return Layer(rngs)

        self.stack = create_layer(rngs)

    def __call__(self, xs):
        @nnx.vmap(in_axes=(0, 0))
        def apply_stack(layer, x):
            return layer(x)

        return apply_stack(self.stack, xs)


def main():
    model = Heads(nnx.Rngs(0))
    xs = jnp.arange(3 * 4.0).reshape(3, 4) / 10.0
    return model(xs)
