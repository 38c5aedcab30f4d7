import jax.numpy as jnp
from flax import nnx


class Model(nnx.Module):
    def __init__(self, rngs: nnx.Rngs):
        self.linear = nnx.Linear(3, 4, rngs=rngs)
        self.norm = nnx.BatchNorm(4, axis_name="groups", rngs=rngs)

    def __call__(self, x):
        return self.norm(self.linear(x))


def call_model(model, x):
    return model(x)


def main():
    model = Model(nnx.Rngs(0))
    data = jnp.arange(30.0).reshape(5, 2, 3) / 10.0
    out = nnx.vmap(call_model, in_axes=(None, 1), axis_name="groups")(model, data)
    return out, model.norm.mean[...]
