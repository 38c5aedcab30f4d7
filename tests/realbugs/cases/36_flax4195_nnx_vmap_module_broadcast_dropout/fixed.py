import jax.numpy as jnp
from flax import nnx


class Noisy(nnx.Module):
    def __init__(self, rngs):
        self.proj = nnx.Linear(4, 4, rngs=rngs)
        self.drop = nnx.Dropout(0.5, rngs=rngs)

    def __call__(self, x):
        return self.drop(self.proj(x))


def infer(model, x):
    return model(x)


def main():
    model = Noisy(nnx.Rngs(params=0, dropout=1))
    per_example_rngs = nnx.StateAxes({nnx.RngState: 0, ...: None})
    run = nnx.split_rngs(splits=6)(nnx.vmap(infer, in_axes=(per_example_rngs, 0)))
    return run(model, jnp.ones((6, 4)))
