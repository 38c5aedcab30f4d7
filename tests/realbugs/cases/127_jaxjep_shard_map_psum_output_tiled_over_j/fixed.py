import jax
import jax.numpy as jnp
from jax.sharding import AxisType
from jax.sharding import PartitionSpec as P


def block_matmul(a_block, b_block):
    partial = a_block @ b_block
    return jax.lax.psum(partial, "j")


def main():
    mesh = jax.make_mesh((4, 2), ("i", "j"), axis_types=(AxisType.Auto, AxisType.Auto))
    a = jnp.arange(32.0).reshape(8, 4) / 32.0
    b = jnp.arange(24.0).reshape(4, 6) / 24.0
    f = jax.shard_map(
        block_matmul,
        mesh=mesh,
        in_specs=(P("i", "j"), P("j", None)),
        out_specs=P("i", None),
    )
    return f(a, b)
