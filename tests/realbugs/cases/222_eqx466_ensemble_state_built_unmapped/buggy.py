import equinox as eqx
import jax
import jax.numpy as jnp


class RunningNorm(eqx.Module):
    linear: eqx.nn.Linear
    mean: eqx.nn.StateIndex

    def __init__(self, key):
        self.linear = eqx.nn.Linear(2, 3, key=key)
        self.mean = eqx.nn.StateIndex(jnp.zeros(3))

    def __call__(self, x, state):
        y = self.linear(x)
        mean = 0.9 * state.get(self.mean) + 0.1 * y
        return y - mean, state.set(self.mean, mean)


def make_member(key):
    return eqx.nn.make_with_state(RunningNorm)(key)


def forward(member, state, x):
    return member(x, state)


def main():
    keys = jax.random.split(jax.random.PRNGKey(0), 4)
    members, state = eqx.filter_vmap(make_member, out_axes=(eqx.if_array(0), None))(keys)
    x = jnp.array([1.0, -0.5])
    run = eqx.filter_vmap(forward, in_axes=(eqx.if_array(0), 0, None))
    ys, state = run(members, state, x)
    ys, state = run(members, state, x)
    return ys, state.get(members.mean)
