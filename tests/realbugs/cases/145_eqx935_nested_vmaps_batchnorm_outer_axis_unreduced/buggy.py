import equinox as eqx
import jax
import jax.numpy as jnp


class Net(eqx.Module):
    linear: eqx.nn.Linear
    norm: eqx.nn.BatchNorm

    def __init__(self, key):
        self.linear = eqx.nn.Linear(2, 3, key=key)
        self.norm = eqx.nn.BatchNorm(3, axis_name="batch", mode="batch")

    def __call__(self, x, state):
        return self.norm(self.linear(x), state)


def main():
    model, state = eqx.nn.make_with_state(Net)(jax.random.PRNGKey(0))
    grid = jnp.arange(5 * 4 * 2.0).reshape(5, 4, 2) / 10.0  # (n, m, features)
    over_m = eqx.filter_vmap(model, in_axes=(0, None), out_axes=(0, None), axis_name="batch")
    over_nm = eqx.filter_vmap(over_m, in_axes=(0, None), out_axes=(0, None))
    y, state = over_nm(grid, state)
    return y, state.get(model.norm.batch_state_index)
