import jax
import jax.numpy as jnp
from jax.sharding import AxisType
from jax.sharding import PartitionSpec as P


def matmul_allgather(lhs_block, rhs_block):
    rhs = jax.lax.all_gather(rhs_block, "i", tiled=True)
    return lhs_block @ rhs


def main():
    mesh = jax.make_mesh((4,), ("i",), axis_types=(AxisType.Auto,))
    lhs = jnp.sin(jnp.arange(64.0)).reshape(8, 8)
    rhs = jnp.cos(jnp.arange(32.0)).reshape(8, 4)
    f = jax.shard_map(matmul_allgather, mesh=mesh, in_specs=(P("i", None), P("i", None)), out_specs=P(None, "i"))
    return f(lhs, rhs)
