import jax.numpy as jnp
from flax import nnx


class Net(nnx.Module):
    def __init__(self, rngs):
        self.linear = nnx.Linear(3, 4, rngs=rngs)
        self.norm = nnx.BatchNorm(4, axis_name="batch", rngs=rngs)

    def __call__(self, x):
        return self.norm(self.linear(x))


def main():
    model = Net(nnx.Rngs(0))
    xs = jnp.arange(24.0).reshape(8, 1, 3) / 12.0  # one 1-example shard per device

    @nnx.pmap(in_axes=(None, 0), axis_name="batch")
    def forward(model, x):
        return model(x)

    return forward(model, xs)
