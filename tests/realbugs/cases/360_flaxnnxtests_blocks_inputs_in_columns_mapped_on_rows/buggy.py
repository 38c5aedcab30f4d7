import jax
from flax import nnx


@nnx.split_rngs(splits=3)
@nnx.vmap(in_axes=(0,), out_axes=0)
def make_blocks(rngs):
    return nnx.Linear(3, 2, rngs=rngs)


def forward(block, x):
    return block(x)


def main():
    blocks = make_blocks(nnx.Rngs(0))
    # column j holds block j's 3-feature input: shape (features, blocks) = (3, 3)
    x = jax.random.uniform(jax.random.key(1), (3, 3))
    return nnx.vmap(forward, in_axes=(0, 0), out_axes=1)(blocks, x)
