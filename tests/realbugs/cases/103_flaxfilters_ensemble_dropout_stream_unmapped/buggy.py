import jax.numpy as jnp
from flax import nnx


class Member(nnx.Module):
    def __init__(self, rngs):
        self.linear = nnx.Linear(4, 3, rngs=rngs)
        self.drop = nnx.Dropout(0.5, rngs=rngs)

    def __call__(self, x):
        return self.drop(self.linear(x))


def forward(model, x):
    return model(x)


def main():
    @nnx.split_rngs(splits=3)
    @nnx.vmap(in_axes=0, out_axes=0)
    def make(rngs):
        return Member(rngs)

    ensemble = make(nnx.Rngs(params=0, dropout=1))
    state_axes = nnx.StateAxes({nnx.Param: 0, ...: None})
    x = jnp.arange(3 * 2 * 4.0).reshape(3, 2, 4) / 10.0
    return nnx.vmap(forward, in_axes=(state_axes, 0))(ensemble, x)
