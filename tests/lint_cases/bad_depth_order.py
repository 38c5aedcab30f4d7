# ruff: noqa
"""AX013 found the same whichever call is read first: reading a value past the depth
limit (30 names from the array) must not leave a name on the way unknown for a later,
shallower read, nor may a value read shallowly stand in for a read past the limit.

Each chain is read twice: once through its 30th name, where the array is out of reach
(an unknown value, so no finding), and once through its 12th, where it is in reach.
"""

import jax
import jax.numpy as jnp


def add(a, b):
    return a + b


# The deep read first, then the shallow one.
A0 = jnp.ones((3, 4))
A1 = A0
A2 = A1
A3 = A2
A4 = A3
A5 = A4
A6 = A5
A7 = A6
A8 = A7
A9 = A8
A10 = A9
A11 = A10
A12 = A11
A13 = A12
A14 = A13
A15 = A14
A16 = A15
A17 = A16
A18 = A17
A19 = A18
A20 = A19
A21 = A20
A22 = A21
A23 = A22
A24 = A23
A25 = A24
A26 = A25
A27 = A26
A28 = A27
A29 = A28
A30 = A29

jax.vmap(add, in_axes=(0, 0))(A30, jnp.ones((3, 4)))
jax.vmap(add, in_axes=(0, 0))(A12, jnp.ones((5, 4)))  # expect: AX013


# The shallow read first, then the deep one.
B0 = jnp.ones((3, 4))
B1 = B0
B2 = B1
B3 = B2
B4 = B3
B5 = B4
B6 = B5
B7 = B6
B8 = B7
B9 = B8
B10 = B9
B11 = B10
B12 = B11
B13 = B12
B14 = B13
B15 = B14
B16 = B15
B17 = B16
B18 = B17
B19 = B18
B20 = B19
B21 = B20
B22 = B21
B23 = B22
B24 = B23
B25 = B24
B26 = B25
B27 = B26
B28 = B27
B29 = B28
B30 = B29

jax.vmap(add, in_axes=(0, 0))(B12, jnp.ones((5, 4)))  # expect: AX013
jax.vmap(add, in_axes=(0, 0))(B30, jnp.ones((3, 4)))
