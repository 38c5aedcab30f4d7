import jax
import jax.numpy as jnp
from jax.sharding import AxisType
from jax.sharding import PartitionSpec as P


def select_local(local_logits, local_indices):
    return local_logits[local_indices]


def main():
    mesh = jax.make_mesh((2, 2), ("data", "attn_dp"), axis_types=(AxisType.Auto,) * 2)
    # 4 attention-DP ranks, each holding 2 rows; each rank picks one of its own rows.
    logits = jnp.arange(24.0).reshape(8, 3)
    indices = jnp.array([1, 0, 1, 1])
    select = jax.shard_map(
        select_local,
        mesh=mesh,
        in_specs=(P("data"), P("data")),
        out_specs=P("data"),
    )
    return select(logits, indices)
