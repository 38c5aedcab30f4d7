import jax.numpy as jnp
from flax import nnx


class Scale(nnx.Variable):
    pass


class Member(nnx.Module):
    def __init__(self, rngs):
        self.linear = nnx.Linear(3, 2, rngs=rngs)
        self.scale = Scale(jnp.array(0.5))


def main():
    @nnx.split_rngs(splits=4)
    @nnx.vmap(in_axes=0, out_axes=0)
    def make_ensemble(rngs):
        return Member(rngs)

    model = make_ensemble(nnx.Rngs(0))
    model.scale = Scale(jnp.array(0.5))  # one scale shared by the 4 members
    graphdef, vectorized, broadcasted = nnx.split(model, nnx.Param, ...)

    @nnx.vmap(in_axis=(0, None))
    def predict(vectorized, broadcasted):
        member = nnx.merge(graphdef, vectorized, broadcasted)
        return member.linear(jnp.ones(3)) * member.scale[...]

    return predict(vectorized, broadcasted)
