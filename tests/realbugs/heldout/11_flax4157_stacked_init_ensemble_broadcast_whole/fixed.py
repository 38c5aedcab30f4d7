import jax.numpy as jnp
from flax import nnx

state_axes = nnx.StateAxes({(nnx.Param, nnx.RngState): 0, ...: None})


class Ensemble(nnx.Module):
    @nnx.split_rngs(splits=4)
    @nnx.vmap(in_axes=(state_axes, 0))
    def __init__(self, rngs: nnx.Rngs):
        self.linear = nnx.Linear(3, 2, rngs=rngs)


def predict(member, x):
    return member.linear(x)


def main():
    ensemble = Ensemble(nnx.Rngs(0))
    x = jnp.linspace(-1.0, 1.0, 15).reshape(5, 3)
    # every member on the same inputs
    return nnx.vmap(predict, in_axes=(state_axes, None))(ensemble, x)
