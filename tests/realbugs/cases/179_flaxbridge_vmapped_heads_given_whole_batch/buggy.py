import jax.numpy as jnp
from flax import nnx


class MultiHead(nnx.Module):
    def __init__(self, n_heads, rngs):
        self.n_heads = n_heads

        @nnx.split_rngs(splits=n_heads)
        @nnx.vmap(in_axes=0, out_axes=0)
        def make_heads(rngs):
            return nnx.Linear(8, 3, rngs=rngs)

        self.heads = make_heads(rngs)

    def __call__(self, x):
        @nnx.vmap(in_axes=(0, 0), axis_size=self.n_heads)
        def apply_heads(head, x):
            return head(x)

        return apply_heads(self.heads, x)


def main():
    model = MultiHead(4, nnx.Rngs(0))
    x = jnp.arange(6 * 8.0).reshape(6, 8) / 20.0  # one batch of 6 examples, read by every head
    return model(x)
