# ruff: noqa
"""AX017: in_axes is not a tree prefix of the arguments.

A vmap maps one axis of each argument; a tuple of axes for an argument that is a single
array (the wish to map two axes at once) is refused, as is a tuple of another length, and
before jax 0.12.1 a tuple for a dict (jax.vmap then matches containers by position).
"""

import jax
import jax.numpy as jnp


def add(x, y):
    return x + y


def first(pair):
    return pair[0]


def total(tree):
    return sum(jax.tree.leaves(tree))


def case_two_axes_of_one_array():
    x = jnp.arange(9.0).reshape(3, 3)
    return jax.vmap(add, in_axes=((0, 1), (0, 1)))(x, x)  # expect: AX017


def case_tuple_for_a_dict():
    params = {"w": jnp.ones((3, 2)), "b": jnp.ones(3)}
    return jax.vmap(total, in_axes=((0, 0),))(params)  # expect(jax<0.12.1): AX017


def case_pmap_tuple_of_another_length():
    return jax.pmap(first, in_axes=((0, 0, 0),))((jnp.ones((2, 3)), jnp.ones((2, 3))))  # expect: AX017


if __name__ == "__main__":
    case_two_axes_of_one_array()
    case_tuple_for_a_dict()
    case_pmap_tuple_of_another_length()
