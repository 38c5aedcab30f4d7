# ruff: noqa
"""Correct versions of the bad_batch_size / bad_axis_beyond_rank / bad_nothing_mapped /
bad_python_scalar cases, and values the linter must not claim to know: it stays silent."""

import sys
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np

import axischeck as ax

rng = np.random.default_rng(0)
KEY = jax.random.PRNGKey(0)
AXES = (None, 0)


def loss(x, y):
    return (jnp.sum(x) - jnp.sum(y)) ** 2


def first(batch):
    return batch["x"].sum() + batch["y"].sum()


def total(x):
    return x.sum()


def correct():
    features = jnp.ones((10, 4))
    jax.vmap(loss)(features, rng.normal(size=(10, 2)))
    jax.vmap(loss, in_axes=(1, 0))(features, jnp.zeros((4, 7)))
    jax.vmap(first)({"x": features, "y": jax.random.normal(KEY, (10, 3))})
    jax.vmap(loss, in_axes=AXES)(1.0, features)  # a scalar passed whole
    jax.vmap(total, in_axes=1)(jnp.arange(32.0).reshape(4, -1))
    jax.vmap(total, in_axes=-2)(jnp.eye(3, 5).T)
    jax.vmap(loss, in_axes=None, axis_size=3)(features, features)
    jax.vmap(loss, in_axes=(None,))(features, y=features)  # y is mapped: passed by keyword
    jax.pmap(loss, in_axes=(0, None))(jnp.ones((2, 3)), 10)
    jax.vmap(loss)(jnp.concatenate([features, features]), jnp.ones((20, 1)))
    partial(jax.vmap(loss), features)(jnp.zeros((10, 2)))
    ax.vmap(loss).predict((10, 4), (10, 2))  # tuples of ints stand for shapes here


def unknowable(flag, n, xs):
    # Bound twice (on two branches, or rebound): either value may reach the call.
    if flag:
        a = jnp.ones((3, 2))
    else:
        a = jnp.ones((4, 2))
    jax.vmap(loss)(a, jnp.ones((4, 2)))
    b = jnp.ones((3, 2))
    b = jnp.ones((4, 2))
    jax.vmap(loss)(b, jnp.ones((4, 2)))
    size = 3
    size += 1
    jax.vmap(loss)(jnp.ones(size), jnp.ones((4, 2)))
    for m in (4, 8 // 2):
        jax.vmap(loss)(jnp.ones(m), jnp.ones((4, 2)))
    # Changed in place after it was built.
    axes = [0]
    axes.append(0)
    jax.vmap(loss, in_axes=axes)(jnp.ones(4), jnp.ones(4))
    batch = {"x": jnp.ones((4, 3))}
    batch["y"] = jnp.ones((4, 3))
    jax.vmap(first)(batch)
    grid = np.zeros((4, 3))
    grid.resize((5, 3))
    jax.vmap(loss)(grid, jnp.ones((5, 3)))
    # Sizes the file does not fix.
    devices = jax.device_count()
    jax.pmap(loss)(jnp.ones((devices, 3)), jnp.ones((jax.local_device_count(), 3)))
    jax.vmap(loss)(jnp.ones((n, 3)), jnp.ones((4, 3)))
    jax.vmap(loss)(jnp.ones(n), xs)
    jax.vmap(loss)(jnp.arange(0.0, 1.0, 0.1), jnp.ones(10))  # the count depends on float rounding


def run(x, axis=0):
    return jax.vmap(total, in_axes=axis)(x)


run(jnp.ones(3))
run(jnp.ones((3, 2)), axis=1)  # two calls, two values: the axis is not known


def scale_all(x, extra):
    return jax.vmap(loss)(x, extra)


scale_all(jnp.ones((4, 2)), jnp.ones((4, 1)))
scale_all(jnp.ones((5, 2)), jnp.ones((5, 1)))


def shadow():
    global SHARED
    SHARED = (0, 0)


SHARED = (None, 0)
jax.vmap(loss, in_axes=SHARED)(jnp.ones(3), jnp.ones(3))


def first(pair):
    return pair[0]


def make_pair():
    return (jnp.ones((3, 2)), jnp.ones((2, 3)))


# Tree prefixes that match: a tuple of axes for a tuple argument, a dict for a dict, two
# nested vmaps for two axes; an argument the file does not state is never judged.
jax.vmap(first, in_axes=((0, None),))((jnp.ones((3, 2)), 1.0))
jax.vmap(first, in_axes=({"a": 0, "b": None},))({"a": jnp.ones(3), "b": jnp.float32(2.0)})
jax.vmap(jax.vmap(loss))(jnp.ones((3, 3)), jnp.ones((3, 3)) * 2.0)
jax.vmap(first, in_axes=((0, 1),))(make_pair())
jax.vmap(loss)(jnp.ones((3, 1)) + jnp.ones(4), jnp.ones((3, 4)) / 2)
jax.vmap(loss, in_axes=(0, None))(jnp.ones((2, 3)), jnp.float32(0.5))


def replicated(mesh):
    # smap with in_axes None maps nothing and runs: every shard gets the whole argument.
    with jax.set_mesh(mesh):
        return jax.smap(lambda x: x * 2, in_axes=None, out_axes=None, axis_name="x")(jnp.arange(8))


if __name__ == "__main__":
    correct()
    unknowable("--flag" in sys.argv, 4, jnp.ones(4))
