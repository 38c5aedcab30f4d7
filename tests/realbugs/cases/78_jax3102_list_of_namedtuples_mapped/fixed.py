from collections import namedtuple

import jax
import jax.numpy as jnp

Sample = namedtuple("Sample", ["x", "y", "n"])


def weighted_total(s):
    return jnp.sum(s.x + s.y) * s.n


def main():
    samples = [Sample(x=jnp.arange(5.0) * i, y=jnp.arange(5.0) + i, n=i + 1) for i in range(4)]
    batched = jax.tree.map(lambda *leaves: jnp.stack(leaves), *samples)
    return jax.vmap(weighted_total)(batched)
