import jax.numpy as jnp
from flax import nnx


class Member(nnx.Module):
    def __init__(self, rngs):
        self.linear = nnx.Linear(3, 4, rngs=rngs)
        self.bn = nnx.BatchNorm(4, rngs=rngs)

    def __call__(self, x):
        return self.bn(self.linear(x))


def forward(model, x):
    return model(x)


def main():
    @nnx.split_rngs(splits=2)
    @nnx.vmap(in_axes=0, out_axes=0)
    def make(rngs):
        return Member(rngs)

    ensemble = make(nnx.Rngs(0))
    axes = nnx.StateAxes({nnx.Param: 0, nnx.BatchStat: 0, ...: None})
    x = jnp.arange(2 * 5 * 3.0).reshape(2, 5, 3) / 10.0
    y = nnx.vmap(forward, in_axes=(axes, 0))(ensemble, x)
    return y, ensemble.bn.mean[...], ensemble.bn.var[...]
