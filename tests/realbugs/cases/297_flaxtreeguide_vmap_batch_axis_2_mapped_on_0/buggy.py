import jax
import jax.numpy as jnp
from flax import nnx


class Count(nnx.Variable):
    pass


class Linear(nnx.Module):
    def __init__(self, din, dout, *, rngs):
        self.w = nnx.Param(jax.random.normal(rngs.params(), (din, dout)))
        self.count = Count(jnp.array(0))

    def __call__(self, x):
        self.count[...] += 1
        return x @ self.w


def batched_forward(model, x):  # model broadcast, x vectorized
    return model(x)


def main():
    model = Linear(3, 3, rngs=nnx.Rngs(0))
    x = jnp.linspace(-1.0, 1.0, 30).reshape(1, 3, 10)  # (1, features, batch of 10)
    y = nnx.vmap(batched_forward, in_axes=(None, 0), out_axes=0)(model, x)
    return y, model.count[...]
