import jax
import jax.numpy as jnp
from flax import nnx


class Net(nnx.Module):
    def __init__(self, rngs):
        self.linear = nnx.Linear(3, 4, rngs=rngs)
        self.bn = nnx.BatchNorm(4, axis_name="devices", rngs=rngs)

    def __call__(self, x):
        return self.bn(self.linear(x))


def forward(model, x):
    return model(x)


def main():
    n = jax.device_count()
    model = Net(nnx.Rngs(0))
    x = jnp.arange(n * 2 * 3.0).reshape(n, 2, 3) / 10.0  # 2 examples per device
    y = nnx.pmap(forward, in_axes=(None, 0), axis_name="devices")(model, x)
    return y, model.bn.mean[...], model.bn.var[...]
