import equinox as eqx
import jax.numpy as jnp


def step(bn, x, state):
    y, _ = bn(x, state)
    return y


def main():
    # the norm averages its statistics over the mapped axis it was told about: "batch"
    bn = eqx.nn.BatchNorm(3, axis_name="batch", mode="batch")
    state = eqx.nn.State(bn)
    xs = jnp.arange(24.0).reshape(8, 3) / 10.0  # one example per device
    run = eqx.filter_pmap(step, in_axes=(None, 0, None), axis_name="batch")
    return run(bn, xs, state)
