import jax
import jax.numpy as jnp
from flax import nnx


class ScaledHead(nnx.Module):
    def __init__(self, n_devices, rngs):
        self.linear = nnx.Linear(8, 8, rngs=rngs)
        self.drop = nnx.Dropout(0.5, rngs=rngs)
        # per-device state built outside the transform: one scale per local device
        self.scale = nnx.Cache(jnp.linspace(0.5, 1.2, n_devices))

    def __call__(self, x):
        return self.drop(self.linear(x)) * self.scale[...]


def main():
    n = 8
    model = ScaledHead(n, nnx.Rngs(params=0, dropout=1))
    state_axes = nnx.StateAxes({nnx.RngState: 0, ...: None})

    @nnx.split_rngs(splits=n)
    @nnx.pmap(in_axes=(state_axes, 0), axis_name="devices")
    def step(model, x):
        y = model(x)
        return y, jax.lax.pmean(jnp.mean(y**2), "devices")

    xs = jnp.arange(n * 8.0).reshape(n, 8) / 30.0
    return step(model, xs)
