import equinox as eqx
import jax
import jax.numpy as jnp


class Cache(eqx.nn.StatefulLayer):
    linear: eqx.nn.Linear
    index: eqx.nn.StateIndex

    def __init__(self, key):
        self.linear = eqx.nn.Linear(3, 4, key=key)
        self.index = eqx.nn.StateIndex(jnp.zeros(4))

    def __call__(self, x, state):
        y = self.linear(x)
        cached = state.get(self.index)
        return y + cached, state.set(self.index, cached + y)


def batch_make_with_state(_):
    return eqx.nn.make_with_state(Cache)(jax.random.PRNGKey(0))


def main():
    batch_size = 5
    model, states = eqx.filter_vmap(batch_make_with_state, out_axes=(None, 0))(jnp.zeros(batch_size))
    x = jnp.arange(batch_size * 3.0).reshape(batch_size, 3) / 10.0
    y, states = eqx.filter_vmap(model, in_axes=(0, 0))(x, states)
    return y, states.get(model.index)
