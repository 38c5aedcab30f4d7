import jax.numpy as jnp
from flax import nnx


@nnx.split_rngs(splits=3)
@nnx.vmap(in_axes=0, out_axes=0)
def make_members(rngs):
    return nnx.Linear(4, 2, rngs=rngs)


def predict_and_return(member, x):
    # returns the member with its predictions so the caller can keep chaining it
    return member(x), member


def main():
    members = make_members(nnx.Rngs(0))
    x = jnp.linspace(-1.0, 1.0, 20).reshape(5, 4)
    # predictions laid out (batch, member, out): the member axis goes to position 1
    preds, members = nnx.vmap(predict_and_return, in_axes=(0, None), out_axes=(1, 0))(members, x)
    return preds, members.kernel.value
