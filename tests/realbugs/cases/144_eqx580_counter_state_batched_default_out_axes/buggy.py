import equinox as eqx
import jax.numpy as jnp


class Counter(eqx.nn.StatefulLayer):
    index: eqx.nn.StateIndex

    def __init__(self):
        self.index = eqx.nn.StateIndex(jnp.array(0))

    def __call__(self, x, state, *, key=None):
        calls = state.get(self.index)
        return x + calls, state.set(self.index, calls + 1)


class Stack(eqx.Module):
    counters: eqx.nn.Sequential

    def __init__(self):
        self.counters = eqx.nn.Sequential([Counter() for _ in range(3)])

    def __call__(self, x, state):
        return self.counters(x, state)


def main():
    model, state = eqx.nn.make_with_state(Stack)()
    x = jnp.ones((2, 3))
    y, state = eqx.filter_vmap(model, in_axes=(0, None))(x, state)
    calls = [state.get(counter.index) for counter in model.counters.layers]
    return y, calls
