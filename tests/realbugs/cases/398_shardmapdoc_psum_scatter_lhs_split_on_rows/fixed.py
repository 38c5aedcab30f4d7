import jax
import jax.numpy as jnp
from jax.sharding import AxisType
from jax.sharding import PartitionSpec as P


def matmul_psumscatter(lhs_block, rhs_block):
    out_summand = lhs_block @ rhs_block
    return jax.lax.psum_scatter(out_summand, "i", tiled=True)


def main():
    mesh = jax.make_mesh((4,), ("i",), axis_types=(AxisType.Auto,))
    lhs = jnp.sin(jnp.arange(64.0)).reshape(8, 8)
    rhs = jnp.cos(jnp.arange(32.0)).reshape(8, 4)
    # both operands sharded along their contracting dimension, the output sharded like rhs
    lhs_spec = P(None, "i")
    rhs_spec = P("i", None)
    f = jax.shard_map(matmul_psumscatter, mesh=mesh, in_specs=(lhs_spec, rhs_spec), out_specs=rhs_spec)
    return f(lhs, rhs)
