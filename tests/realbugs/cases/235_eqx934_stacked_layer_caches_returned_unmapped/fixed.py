import equinox as eqx
import jax
import jax.numpy as jnp


class CachedLayer(eqx.Module):
    linear: eqx.nn.Linear
    cache: eqx.nn.StateIndex

    def __init__(self, key):
        self.linear = eqx.nn.Linear(4, 4, key=key)
        self.cache = eqx.nn.StateIndex(jnp.zeros(4))

    def __call__(self, x, state):
        y = self.linear(x) + 0.5 * state.get(self.cache)
        return y, state.set(self.cache, y)


def apply_layer(layer, state, x):
    return layer(x, state)


def main():
    keys = jax.random.split(jax.random.PRNGKey(0), 3)
    layers, state = eqx.filter_vmap(eqx.nn.make_with_state(CachedLayer))(keys)
    x = jnp.arange(4.0) / 4.0
    run = eqx.filter_vmap(apply_layer, in_axes=(eqx.if_array(0), 0, None), out_axes=0)
    ys, state = run(layers, state, x)
    ys, state = run(layers, state, x)
    return ys, state.get(layers.cache)
