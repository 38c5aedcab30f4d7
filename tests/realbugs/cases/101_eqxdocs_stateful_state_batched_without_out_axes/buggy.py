import equinox as eqx
import jax
import jax.numpy as jnp


class Net(eqx.Module):
    norm: eqx.nn.BatchNorm
    linear: eqx.nn.Linear

    def __init__(self, key):
        self.norm = eqx.nn.BatchNorm(input_size=3, axis_name="batch", mode="batch")
        self.linear = eqx.nn.Linear(3, 2, key=key)

    def __call__(self, x, state):
        x, state = self.norm(x, state)
        return self.linear(x), state


def main():
    model, state = eqx.nn.make_with_state(Net)(jax.random.PRNGKey(0))
    xs = jnp.arange(12.0).reshape(4, 3) / 5.0
    batch_model = eqx.filter_vmap(model, axis_name="batch", in_axes=(0, None))
    ys, state = batch_model(xs, state)
    return ys, jax.tree.leaves(state)
