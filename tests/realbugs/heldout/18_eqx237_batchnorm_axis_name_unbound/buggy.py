import equinox as eqx
import jax.numpy as jnp


def main():
    bn, state = eqx.nn.make_with_state(eqx.nn.BatchNorm)(3, axis_name="batch", mode="batch")

    def normalise(x, state):
        return bn(x, state)

    xs = jnp.linspace(-1.0, 2.0, 12).reshape(4, 3)
    batch_bn = eqx.filter_vmap(normalise, in_axes=(0, None), out_axes=(0, None))
    out, state = batch_bn(xs, state)
    return out
