import jax.numpy as jnp
from flax import nnx


class Noisy(nnx.Module):
    def __init__(self, rngs):
        self.proj = nnx.Linear(4, 4, rngs=rngs)
        self.drop = nnx.Dropout(0.5, rngs=rngs)

    def __call__(self, x):
        return self.drop(self.proj(x))


def infer(model, x):
    return model(x)


def main():
    model = Noisy(nnx.Rngs(params=0, dropout=1))
    return nnx.vmap(infer, in_axes=(None, 0))(model, jnp.ones((6, 4)))
