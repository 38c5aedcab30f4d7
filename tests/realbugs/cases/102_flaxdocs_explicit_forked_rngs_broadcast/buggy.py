import jax.numpy as jnp
from flax import nnx


class Model(nnx.Module):
    def __init__(self, rngs):
        self.linear = nnx.Linear(6, 4, rngs=rngs)
        self.drop = nnx.Dropout(0.5)

    def __call__(self, x, *, rngs):
        return self.drop(self.linear(x), rngs=rngs, deterministic=False)


def model_forward(model, x, rngs):
    return model(x, rngs=rngs)


def main():
    model = Model(nnx.Rngs(0))
    dropout_rngs = nnx.Rngs(dropout=1).fork(split=5)
    x = jnp.ones((5, 6))
    return nnx.vmap(model_forward, in_axes=(None, 0, None))(model, x, dropout_rngs)
