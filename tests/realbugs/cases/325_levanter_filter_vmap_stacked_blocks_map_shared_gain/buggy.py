import equinox as eqx
import jax
import jax.numpy as jnp

N_LAYERS = 4
DIM = 4


class Block(eqx.Module):
    mlp: eqx.nn.Linear
    gain: jax.Array

    def __init__(self, key, gain):
        self.mlp = eqx.nn.Linear(DIM, DIM, key=key)
        self.gain = gain

    def __call__(self, h):
        return h + jax.nn.gelu(self.mlp(h * self.gain))


def make_stack(keys, gain):
    return eqx.filter_vmap(Block)(keys, gain)


def main():
    gain = jnp.array([1.0, 0.5, 0.25, 2.0])
    stack = make_stack(jax.random.split(jax.random.PRNGKey(0), N_LAYERS), gain)
    dynamic, static = eqx.partition(stack, eqx.is_array)

    def layer(h, params):
        return eqx.combine(params, static)(h), None

    h, _ = jax.lax.scan(layer, jnp.ones(DIM) / 4.0, dynamic)
    return h
