import equinox as eqx
import jax
import jax.numpy as jnp


class Counter(eqx.Module):
    index: eqx.nn.StateIndex

    def __init__(self):
        self.index = eqx.nn.StateIndex(jnp.array(0.0))

    def __call__(self, x, state):
        calls = state.get(self.index)
        return x + calls, state.set(self.index, calls + 1)


class Model(eqx.Module):
    linear: eqx.nn.Linear
    counter: Counter
    v_counter: Counter

    def __init__(self, key):
        self.linear = eqx.nn.Linear(2, 2, key=key)
        self.counter = Counter()
        self.v_counter = eqx.filter_vmap(Counter, axis_size=2)()

    def __call__(self, x, state):
        x = self.linear(x)
        x, state = self.counter(x, state)
        x, state = eqx.filter_vmap(self.v_counter)(x, state)
        return x, state


def main():
    model, state = eqx.nn.make_with_state(Model)(jax.random.PRNGKey(0))
    y, state = model(jnp.array([5.0, -1.0]), state)
    return y, state.get(model.counter.index), state.get(model.v_counter.index)
