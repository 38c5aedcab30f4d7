import equinox as eqx
import jax.numpy as jnp


def normalise(bn, x, state):
    return bn(x, state)


def main():
    bn = eqx.nn.BatchNorm(3, axis_name="batch", mode="ema")
    state = eqx.nn.State(bn)
    xs = jnp.arange(15.0).reshape(5, 3) / 7.0
    # normalise a batch of 5 examples; the running statistics are shared by the batch
    step = eqx.filter_vmap(normalise, in_axes=(None, 0, None), out_axes=(0, None), axis_name="batch")
    ys, state = step(bn, xs, state)
    return ys, state.get(bn.ema_state_index)
