import jax
import jax.numpy as jnp
from jax.sharding import AxisType
from jax.sharding import PartitionSpec as P


def block_report(x):
    # One row per device: its position on the mesh and the sum of its block.
    i = jax.lax.axis_index("i").astype(jnp.float32)
    j = jax.lax.axis_index("j").astype(jnp.float32)
    return jnp.stack([i, j, jnp.sum(x)])[None]


def main():
    mesh = jax.make_mesh((4, 2), ("i", "j"), axis_types=(AxisType.Auto,) * 2)
    x = jnp.arange(32.0).reshape(8, 4)
    f = jax.shard_map(block_report, mesh=mesh, in_specs=P("i", "j"), out_specs=P(("i", "j")))
    return f(x)
