import equinox as eqx
import jax
import jax.numpy as jnp
import jax.tree_util as jtu


class FeedForward(eqx.Module):
    layer1: eqx.nn.Linear
    layer2: eqx.nn.Linear

    def __init__(self, in_features, out_features, key):
        key1, key2 = jax.random.split(key)
        self.layer1 = eqx.nn.Linear(in_features, out_features, key=key1)
        self.layer2 = eqx.nn.Linear(out_features, out_features, key=key2)

    def __call__(self, x):
        return self.layer2(jax.nn.relu(self.layer1(x)))


def stack_blocks(blocks):
    return jtu.tree_map(lambda *x: jnp.stack(x) if eqx.is_array(x) else x, *blocks)


def apply_block(block, x):
    return block(x)


def main():
    keys = jax.random.split(jax.random.PRNGKey(1), 2)
    blocks = stack_blocks([FeedForward(4, 3, k) for k in keys])
    x = jnp.linspace(-1.0, 1.0, 4)
    return eqx.filter_vmap(apply_block, in_axes=(eqx.if_array(0), None))(blocks, x)
