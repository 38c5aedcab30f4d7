import jax
import jax.numpy as jnp
from flax import nnx


class Model(nnx.Module):
    def __init__(self, rngs):
        self.linear = nnx.Linear(5, 3, rngs=rngs)
        self.drop = nnx.Dropout(0.5, rngs=rngs)

    def __call__(self, x):
        return self.drop(self.linear(x))


def main():
    model = Model(nnx.Rngs(params=0, dropout=1))
    num_devices = jax.local_device_count()
    x = jnp.ones((num_devices, 2, 5))

    @nnx.split_rngs(splits=num_devices, only="dropout")
    @nnx.pmap(in_axes=(nnx.StateAxes({"dropout": 0, ...: None}), 0), out_axes=0)
    def forward(model, x):
        return model(x)

    return forward(model, x)
