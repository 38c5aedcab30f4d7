import jax
import jax.numpy as jnp
from flax import nnx

N_BLOCKS = 4
BATCH = 4
FEATURES = 3


def make_blocks():
    @nnx.split_rngs(splits=N_BLOCKS)
    @nnx.vmap(in_axes=(0,), out_axes=0)
    def make_block(rngs):
        return nnx.Linear(FEATURES, FEATURES, rngs=rngs)

    return make_block(nnx.Rngs(0))


@nnx.scan(in_axes=(nnx.Carry, 0), out_axes=nnx.Carry)
def scan_layers(x, block):
    return jax.nn.relu(block(x))


def batched_forward(x, blocks):
    return scan_layers(x, blocks)


def main():
    blocks = make_blocks()
    x_batch = jnp.arange(BATCH * FEATURES * 1.0).reshape(BATCH, FEATURES) / 10.0
    batched = nnx.vmap(batched_forward, in_axes=(0, None))
    return batched(x_batch, blocks)
