import jax.numpy as jnp
from flax import nnx


class Net(nnx.Module):
    def __init__(self, rngs):
        self.linear = nnx.Linear(3, 4, rngs=rngs)
        self.norm = nnx.BatchNorm(4, axis_name="batch", rngs=rngs)

    def __call__(self, x):
        return self.norm(self.linear(x))


def forward(model, x):
    return model(x)


def main():
    model = Net(nnx.Rngs(0))
    xs = jnp.arange(18.0).reshape(6, 3) / 9.0
    # the model is written for one example; the batch is vmapped over it
    ys = nnx.vmap(forward, in_axes=(None, 0))(model, xs)
    return ys, model.norm.mean[...], model.norm.var[...]
