# ruff: noqa
"""AX018: out_axes is None for an output computed from a mapped argument.

out_axes=None says the output is the same for every example (or device); an output that
depends on a mapped argument is not. vmap and smap raise; pmap returns device 0's value.
"""

import jax
import jax.numpy as jnp


def init(x, key):
    w = jax.random.normal(key, (2,))
    return x * w.sum(), w


def double(x):
    return x * 2.0


def case_vmap_tuple_output():
    keys = jax.random.split(jax.random.key(0), 3)
    return jax.vmap(init, in_axes=(0, 0), out_axes=(0, None))(jnp.arange(3.0), keys)  # expect: AX018


def case_vmap_lambda():
    return jax.vmap(lambda x: jnp.tanh(x).sum(), out_axes=None)(jnp.ones((3, 2)))  # expect: AX018


def case_smap(mesh):
    with jax.set_mesh(mesh):
        return jax.smap(double, in_axes=0, out_axes=None, axis_name="x")(jnp.arange(8.0))  # expect: AX018


if __name__ == "__main__":
    case_vmap_tuple_output()
    case_vmap_lambda()
    case_smap(jax.make_mesh((2,), ("x",), axis_types=(jax.sharding.AxisType.Auto,)))
