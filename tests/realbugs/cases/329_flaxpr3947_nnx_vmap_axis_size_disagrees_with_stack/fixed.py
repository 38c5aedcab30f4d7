import jax.numpy as jnp
from flax import nnx

N_MEMBERS = 3
N_SAMPLES = 4


def make_ensemble():
    @nnx.split_rngs(splits=N_MEMBERS)
    @nnx.vmap(in_axes=0, out_axes=0)
    def create(rngs):
        return nnx.Linear(4, 2, rngs=rngs)

    return create(nnx.Rngs(0))


def score(member, x):
    return jnp.tanh(member(x))


def main():
    ensemble = make_ensemble()
    x = jnp.linspace(-1.0, 1.0, 4)
    return nnx.vmap(score, in_axes=(0, None), axis_size=N_MEMBERS)(ensemble, x)
