import jax.numpy as jnp
from flax import nnx


class Member(nnx.Module):
    def __init__(self, rngs):
        self.linear = nnx.Linear(2, 3, rngs=rngs)
        self.dropout = nnx.Dropout(0.5, rngs=rngs)

    def __call__(self, x):
        return self.dropout(self.linear(x))


@nnx.split_rngs(splits=4, only="params")
@nnx.vmap(in_axes=(nnx.StateAxes({"params": 0, ...: None}),), out_axes=nnx.StateAxes({nnx.Param: 0, ...: None}))
def create_members(rngs):
    return Member(rngs)


def forward(member, x):
    return member(x)


def main():
    members = create_members(nnx.Rngs(params=0, dropout=1))
    members.eval()
    x = jnp.array([0.5, -1.0])
    # members' Params are stacked, their dropout stream is shared: map the one, broadcast the rest
    return nnx.vmap(forward, in_axes=(nnx.StateAxes({nnx.Param: 0, ...: None}), None))(members, x)
