import jax.numpy as jnp
from flax import nnx


def forward(model, x):
    return model(x)


def main():
    model = nnx.Linear(3, 5, rngs=nnx.Rngs(0))
    x = jnp.arange(4 * 3.0).reshape(4, 3) / 10.0  # one row per device
    return nnx.pmap(forward, in_axes=(None, 0))(model, x)
