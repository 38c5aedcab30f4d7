import jax.numpy as jnp
from flax import nnx


def make_ensemble():
    @nnx.split_rngs(splits=3)
    @nnx.vmap(in_axes=0, out_axes=0)
    def make(rngs):
        return nnx.Linear(4, 2, rngs=rngs)

    return make(nnx.Rngs(0))


def predict(model, x):
    return model(x)


def main():
    ensemble = make_ensemble()
    x = jnp.arange(20.0).reshape(5, 4) / 10.0
    return nnx.vmap(predict, in_axes=(0, None))(ensemble, x)
