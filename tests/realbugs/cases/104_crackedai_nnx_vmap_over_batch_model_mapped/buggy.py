import jax.numpy as jnp
from flax import nnx


def fwd(model, x):
    return model(x)


def main():
    model = nnx.Linear(4, 4, rngs=nnx.Rngs(0))
    x_batch = jnp.arange(16.0).reshape(4, 4) / 8.0
    return nnx.vmap(fwd)(model, x_batch)
