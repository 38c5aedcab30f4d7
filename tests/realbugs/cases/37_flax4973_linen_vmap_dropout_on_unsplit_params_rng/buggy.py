import flax.linen as nn
import jax
import jax.numpy as jnp


class Block(nn.Module):
    @nn.compact
    def __call__(self, x):
        x = nn.Dense(3)(x)
        return nn.Dropout(0.5, deterministic=False)(x)


Stacked = nn.vmap(
    Block,
    in_axes=0,
    out_axes=0,
    variable_axes={"params": 0},
    split_rngs={"params": True, "dropout": True},
)


def main():
    x = jnp.ones((5, 3))
    variables = Stacked().init(jax.random.key(0), x)
    # One key for apply goes to the "params" stream; Dropout falls back to it, and with
    # params split only at init the mask below is drawn from a stream the map does not split.
    model = nn.vmap(
        Block,
        in_axes=0,
        out_axes=0,
        variable_axes={"params": 0},
        split_rngs={"params": False, "dropout": True},
    )
    return model().apply(variables, x, rngs=jax.random.key(1))
