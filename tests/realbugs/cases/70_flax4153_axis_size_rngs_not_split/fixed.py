import jax.numpy as jnp
from flax import nnx


@nnx.split_rngs(splits=3)
@nnx.vmap(axis_size=3)
def create_hidden_layers(rngs: nnx.Rngs):
    return nnx.Linear(4, 4, rngs=rngs)


def main():
    layers = create_hidden_layers(nnx.Rngs(0))
    x = jnp.arange(4.0) / 4.0
    for i in range(3):
        x = jnp.tanh(x @ layers.kernel[...][i] + layers.bias[...][i])
    return layers.kernel[...], x
