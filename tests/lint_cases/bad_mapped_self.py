# ruff: noqa
"""AX027: a vmap or pmap decorating a method of a plain class maps `self`, which is no
array and no pytree; JAX raises TypeError 'is not a valid JAX type' (jax#9248)."""

from functools import partial

import jax
import jax.numpy as jnp


class Scaler:
    def __init__(self, factor):
        self.factor = factor

    @jax.pmap  # expect: AX027
    def apply(self, x):
        return x * self.factor

    @partial(jax.vmap, in_axes=(0, 0))  # expect: AX027
    def shift(self, x):
        return x + self.factor


def case_pmap_method():
    return Scaler(3.0).apply(jnp.ones((1, 4)))


def case_vmap_method():
    return Scaler(3.0).shift(jnp.ones((4, 2)))


if __name__ == "__main__":
    case_pmap_method()
