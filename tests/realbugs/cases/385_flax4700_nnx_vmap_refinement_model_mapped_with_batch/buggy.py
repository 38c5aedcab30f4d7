import jax.numpy as jnp
from flax import nnx


class Model(nnx.Module):
    def __init__(self, din, dout, rngs: nnx.Rngs):
        self.linear = nnx.Linear(din, dout, rngs=rngs)

    def __call__(self, x):
        return jnp.tanh(self.linear(x))


def refine(model, x, num_steps):
    # apply the model num_steps times to x (a per-example count, at most 4)
    for i in range(4):
        x = jnp.where(i < num_steps, model(x), x)
    return x


def main():
    model = Model(4, 4, rngs=nnx.Rngs(0))
    xs = jnp.linspace(-1.0, 1.0, 3 * 4).reshape(3, 4)
    num_steps = jnp.arange(3)
    return nnx.vmap(refine)(model, xs, num_steps)
