# ruff: noqa
"""Correct code the linter once misread: each runs under JAX, and lint stays silent."""

import jax
import jax.numpy as jnp
import numpy as np


def scale(row):
    return row * 2.0


# ndmin adds leading axes: (1, 3), and in_axes=1 maps its 3 columns.
x = np.array([1.0, 2.0, 3.0], ndmin=2)
out = jax.vmap(scale, in_axes=1)(x)

# Without a shape, truncated_normal draws the broadcast shape of its bounds: (5,).
key = jax.random.key(0)
samples = jax.random.truncated_normal(key, jnp.full((5,), -2.0), 2.0)
out = jax.vmap(scale)(samples)


class Scaler:
    def apply(self, x):
        return x * 2.0

    @classmethod
    def batched(cls, obj, xs):
        # `cls.apply` in a classmethod is the plain function: `self` is its first argument.
        return jax.vmap(cls.apply, in_axes=(None, 0))(obj, xs)


out = Scaler.batched(Scaler(), jnp.ones(3))


class Loss:
    def per_example(self, params, x):
        return params * x

    def batched(self, params, xs, ys):
        # `self.per_example` of a Supervised instance is the subclass's, of three parameters.
        return jax.vmap(self.per_example, in_axes=(None, 0, 0))(params, xs, ys)


class Supervised(Loss):
    def per_example(self, params, x, y):
        return (params * x - y) ** 2


out = Supervised().batched(2.0, jnp.ones(3), jnp.ones(3))


def product(x, y):
    return x * y


# A class body reads a name it has not bound yet from around the class: `AXES = AXES` is
# the module's list, which grows to (0, 0) through the class.
AXES = [0]


class Options:
    AXES = AXES


Options.AXES.append(0)
out = jax.vmap(product, in_axes=AXES)(jnp.ones((4, 2)), jnp.ones((4, 2)))

# A comprehension in a class body does not see the class's names: it grows the module's list.
MORE_AXES = [0]


class Grown:
    MORE_AXES = ()
    done = [MORE_AXES.append(0) for _ in range(1)]


out = jax.vmap(product, in_axes=MORE_AXES)(jnp.ones((4, 2)), jnp.ones((4, 2)))
