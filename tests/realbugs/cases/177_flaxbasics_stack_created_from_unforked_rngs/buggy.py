import jax.numpy as jnp
from flax import nnx


class MLP(nnx.Module):
    def __init__(self, din, dmid, dout, rngs):
        self.linear1 = nnx.Linear(din, dmid, rngs=rngs)
        self.linear2 = nnx.Linear(dmid, dout, rngs=rngs)

    def __call__(self, x):
        return x + self.linear2(nnx.relu(self.linear1(x)))


@nnx.vmap(in_axes=0, out_axes=0)
def create_model(rngs):
    return MLP(4, 8, 4, rngs=rngs)


@nnx.scan(in_axes=(0, nnx.Carry), out_axes=nnx.Carry)
def forward(model, x):
    return model(x)


def main():
    param_rngs = nnx.Rngs(0)  # meant to give 5 layers
    model = create_model(param_rngs)
    x = jnp.ones((2, 4))
    y = forward(model, x)
    return y, model.linear1.kernel[...]
