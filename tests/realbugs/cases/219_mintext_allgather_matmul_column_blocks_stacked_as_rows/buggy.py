import jax
import jax.numpy as jnp
from jax.sharding import AxisType
from jax.sharding import PartitionSpec as P


def matmul_allgather_a(a_block, b_block):
    # Gather A's rows so each device holds all of A, then multiply by its columns of B.
    a_full = jax.lax.all_gather(a_block, "x", axis=0, tiled=True)
    return a_full @ b_block


def main():
    mesh = jax.make_mesh((2, 2), ("x", "y"), axis_types=(AxisType.Auto,) * 2)
    a = jnp.arange(16, dtype=jnp.float32).reshape(4, 4)
    b = jnp.arange(16, 32, dtype=jnp.float32).reshape(4, 4)
    # A[I_X, J] . B[J, K_X], all-gathering A.
    f = jax.shard_map(
        matmul_allgather_a,
        mesh=mesh,
        in_specs=(P("x", None), P(None, "x")),
        out_specs=P("x"),
    )
    return f(a, b)
