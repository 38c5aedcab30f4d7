import jax
import jax.numpy as jnp
from jax.sharding import AxisType
from jax.sharding import PartitionSpec as P

NUM_EXPERTS = 4


def permute_local(expert_ids):
    sort_idx = jnp.argsort(expert_ids)
    group_sizes = jnp.bincount(expert_ids, length=NUM_EXPERTS)
    for axis in ("dp", "fsdp"):
        group_sizes = jax.lax.psum(group_sizes, axis_name=axis)
    return sort_idx, group_sizes


def main():
    mesh = jax.make_mesh((2, 2), ("dp", "fsdp"), axis_types=(AxisType.Auto,) * 2)
    expert_ids = jnp.array([0, 1, 1, 3, 2, 2, 2, 0, 3, 3, 1, 0, 2, 1, 3, 3])
    permute = jax.shard_map(
        permute_local,
        mesh=mesh,
        in_specs=P(("dp", "fsdp")),
        out_specs=(P(("dp", "fsdp")), P()),
        check_vma=False,
    )
    return permute(expert_ids)
