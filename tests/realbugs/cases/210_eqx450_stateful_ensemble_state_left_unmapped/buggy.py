import equinox as eqx
import jax
import jax.numpy as jnp


class StatefulLayer(eqx.Module):
    linear: eqx.nn.Linear
    index: eqx.nn.StateIndex

    def __init__(self, key):
        self.linear = eqx.nn.Linear(2, 3, key=key)
        self.index = eqx.nn.StateIndex(jnp.zeros(3))

    def __call__(self, x, state):
        total = state.get(self.index) + self.linear(x)
        return total, state.set(self.index, total)


def forward(layer, state, x):
    return layer(x, state)


def main():
    keys = jax.random.split(jax.random.PRNGKey(0), 4)
    layers, states = eqx.filter_vmap(eqx.nn.make_with_state(StatefulLayer))(keys)
    x = jnp.array([0.5, -1.0])
    run = eqx.filter_vmap(forward, in_axes=(eqx.if_array(0), None, None))
    ys, states = run(layers, states, x)
    ys, states = run(layers, states, x)
    return ys, states.get(layers.index)
