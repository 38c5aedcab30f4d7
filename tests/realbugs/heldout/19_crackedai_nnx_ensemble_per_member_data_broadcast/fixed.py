import jax.numpy as jnp
from flax import nnx


@nnx.split_rngs(splits=3)
@nnx.vmap(in_axes=(0,), out_axes=0)
def make_ensemble(rngs):
    return nnx.Linear(3, 2, use_bias=False, rngs=rngs)


def predict(model, x):
    return model(x)


def main():
    ensemble = make_ensemble(nnx.Rngs(0))
    # member i is evaluated on its own 3-feature input, row i
    xs = jnp.arange(9.0).reshape(3, 3) / 5.0
    return nnx.vmap(predict, in_axes=(0, 0))(ensemble, xs)
