import jax.numpy as jnp
from flax import nnx


class Model(nnx.Module):
    def __init__(self, rngs: nnx.Rngs):
        self.linear = nnx.Linear(6, 4, rngs=rngs)
        self.drop = nnx.Dropout(0.5, deterministic=False, rngs=rngs)

    def __call__(self, x):
        return self.drop(self.linear(x))


def sample_from_model(model, x):
    return model(x)


def main():
    model = Model(nnx.Rngs(params=0, dropout=1))
    x = jnp.ones((6,)) / 2.0
    samples = nnx.vmap(sample_from_model, in_axes=(None, None), axis_size=5)(model, x)
    return samples
