import jax
import jax.numpy as jnp


def sample_structure(coords, mask, tie_map):
    per_residue = jnp.sum(coords, axis=-1) * mask
    group_total = jax.ops.segment_sum(per_residue, tie_map, num_segments=5)
    return group_total[tie_map]


def main():
    coords = jnp.arange(15.0).reshape(1, 5, 3) / 10.0
    mask = jnp.ones((1, 5))
    tie_map = jnp.array([0, 0, 1, 2, 2])
    return jax.vmap(sample_structure, in_axes=(0, 0, 0))(coords, mask, tie_map)
