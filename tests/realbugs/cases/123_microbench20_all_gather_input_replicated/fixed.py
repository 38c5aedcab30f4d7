import jax
import jax.numpy as jnp
from jax.sharding import AxisType
from jax.sharding import PartitionSpec as P


def gather_over_ici(block):
    return jax.lax.all_gather(block, "ici", axis=1, tiled=True)


def main():
    mesh = jax.make_mesh((4,), ("ici",), axis_types=(AxisType.Auto,))
    matrix = jnp.arange(32.0).reshape(4, 8)
    f = jax.shard_map(
        gather_over_ici,
        mesh=mesh,
        in_specs=P(None, "ici"),
        out_specs=P(None, None),
        check_vma=False,
    )
    return f(matrix)
