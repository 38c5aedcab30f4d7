from collections.abc import Callable

import equinox as eqx
import jax
import jax.numpy as jnp


class Scaled(eqx.Module):
    shift: jax.Array
    scale: jax.Array
    activation: Callable = jnp.tanh

    def __call__(self, x):
        return self.activation((self.shift + x) * self.scale)


def evaluate(member, x):
    return member(x)


def main():
    members = eqx.filter_vmap(Scaled)(jnp.array([0.5, -0.2]), jnp.array([[1.0, 2.0], [3.0, 0.5]]))
    x = jnp.array([-0.3, 0.4])
    return eqx.filter_vmap(evaluate)(members, x)
