import jax
import jax.numpy as jnp
from jax.sharding import AxisType
from jax.sharding import PartitionSpec as P


def matmul_basic(a_block, b_block):
    # 'y' has one device here, so the block product is already the full sum
    return jnp.dot(a_block, b_block)


def main():
    mesh = jax.make_mesh((4, 1), ("x", "y"), axis_types=(AxisType.Auto,) * 2)
    a = jnp.arange(8 * 16.0).reshape(8, 16) / 100.0
    b = jnp.arange(16 * 4.0).reshape(16, 4) / 100.0
    f = jax.shard_map(matmul_basic, mesh=mesh, in_specs=(P("x", None), P(None, None)), out_specs=P("x", None))
    return f(a, b)
