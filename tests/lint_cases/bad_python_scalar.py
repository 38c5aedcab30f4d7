# ruff: noqa
"""AX016: in_axes maps a Python scalar, which has no axis.

`pmap(f)(x, 10)` maps 10 over axis 0 (in_axes=0 is the default for every argument);
vmap refuses it as an argument of rank 0.
"""

import jax
import jax.numpy as jnp

LEARNING_RATE = 0.1


def step(x, lr):
    return x * lr


def update(params, hyper):
    return params * hyper["lr"]


def case_pmap_int():
    return jax.pmap(step)(jnp.ones((2, 3)), 10)  # expect: AX016


def case_vmap_constant():
    return jax.vmap(step)(jnp.ones((4, 3)), LEARNING_RATE)  # expect: AX016


def case_inside_a_dict():
    return jax.vmap(update)(jnp.ones((4, 3)), {"lr": 0.5})  # expect: AX016


def ident(x):
    return x


def case_stray_leaf_in_a_list():
    z = [jnp.ones((2, n)) for n in range(1, 4)]
    x = [z, z + [0], z]
    return jax.pmap(ident)(x)  # expect: AX016


def loaded():
    """An array whose shape lint cannot read."""
    return jnp.stack([jnp.ones(3) * k for k in range(2)])


def case_pmap_int_beside_an_unknown_shape():
    return jax.pmap(step)(loaded(), 10)  # expect: AX016


def tiled(x, n):
    return jnp.tile(x, n)


def case_pmap_int_used_as_a_size():
    return jax.pmap(tiled)(loaded(), 3)  # expect: AX016


def case_smap_int(mesh):
    with jax.set_mesh(mesh):
        return jax.smap(step, in_axes=(0, 0), out_axes=0, axis_name="x")(jnp.ones((4, 3)), 3)  # expect: AX016


if __name__ == "__main__":
    case_pmap_int()
    case_vmap_constant()
    case_inside_a_dict()
    case_stray_leaf_in_a_list()
    case_pmap_int_beside_an_unknown_shape()
    case_pmap_int_used_as_a_size()
    case_smap_int(jax.make_mesh((2,), ("x",), axis_types=(jax.sharding.AxisType.Auto,)))
