import equinox as eqx
import jax
import jax.numpy as jnp


class Classifier(eqx.Module):
    linear: eqx.nn.Linear
    norm: eqx.nn.BatchNorm

    def __init__(self, key):
        self.linear = eqx.nn.Linear(2, 3, key=key)
        self.norm = eqx.nn.BatchNorm(input_size=3, axis_name="batch", mode="batch")

    def __call__(self, x, state):
        return self.norm(self.linear(x), state)


def forward(model, x, state):
    return model(x, state)


def main():
    model, state = eqx.nn.make_with_state(Classifier)(jax.random.PRNGKey(2))
    xs = jnp.arange(10.0).reshape(5, 2) / 4.0
    ys, state = eqx.filter_vmap(forward, in_axes=(None, 0, None), out_axes=(0, None), axis_name="batch")(
        model, xs, state
    )
    return ys, jax.tree.leaves(state)
