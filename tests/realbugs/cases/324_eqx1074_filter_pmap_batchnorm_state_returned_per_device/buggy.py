import equinox as eqx
import jax
import jax.numpy as jnp


class ConvNet(eqx.Module):
    norm: eqx.nn.BatchNorm
    head: eqx.nn.Linear

    def __init__(self, key):
        self.norm = eqx.nn.BatchNorm(3, axis_name=("devices", "batch"), mode="batch")
        self.head = eqx.nn.Linear(3, 2, key=key)

    def __call__(self, x, state):
        x, state = self.norm(x, state)
        return self.head(x), state


def forward(model, state, xs):
    batched = jax.vmap(model, axis_name="batch", in_axes=(0, None), out_axes=(0, None))
    return batched(xs, state)


def main():
    model, state = eqx.nn.make_with_state(ConvNet)(jax.random.PRNGKey(0))
    xs = jnp.arange(8 * 2 * 3.0).reshape(8, 2, 3) / 10.0
    parallel = eqx.filter_pmap(forward, in_axes=(None, None, 0), axis_name="devices")
    ys, state = parallel(model, state, xs)
    return ys, jax.tree.leaves(state)
