import jax
import jax.numpy as jnp
from jax.sharding import AxisType
from jax.sharding import PartitionSpec as P


def matmul_local(a_block, b_block):
    # A[I, J_X] . B[J_X, K]: each device multiplies its slice of the contracting dimension.
    c_partial = a_block @ b_block
    return jax.lax.psum(c_partial, "x")


def main():
    mesh = jax.make_mesh((2, 2), ("x", "y"), axis_types=(AxisType.Auto,) * 2)
    a = jnp.arange(16, dtype=jnp.float32).reshape(4, 4)
    b = jnp.arange(16, 32, dtype=jnp.float32).reshape(4, 4)
    f = jax.shard_map(
        matmul_local,
        mesh=mesh,
        in_specs=(P(None, "x"), P("x", None)),
        out_specs=P(None, None),
    )
    return f(a, b)
