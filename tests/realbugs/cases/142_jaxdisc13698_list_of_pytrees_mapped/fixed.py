from typing import NamedTuple

import jax
import jax.numpy as jnp


class Point3(NamedTuple):
    x: jax.Array
    y: jax.Array
    z: jax.Array


def norm2(p):
    return p.x**2 + p.y**2 + p.z**2


def main():
    points = [
        Point3(jnp.float32(1.0), jnp.float32(2.0), jnp.float32(0.0)),
        Point3(jnp.float32(2.0), jnp.float32(4.0), jnp.float32(1.0)),
    ]
    points = jax.tree.map(lambda *leaves: jnp.stack(leaves), *points)
    return jax.vmap(norm2)(points)
