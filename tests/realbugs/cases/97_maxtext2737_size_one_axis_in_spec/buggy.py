import jax
import jax.numpy as jnp
from jax.sharding import AxisType
from jax.sharding import PartitionSpec as P


def global_sq_norm(grads):
    return jax.lax.psum(jnp.sum(grads * grads), "fsdp")


def main():
    # FSDP only: the 'data' axis of the mesh has size 1.
    mesh = jax.make_mesh((1, 4), ("data", "fsdp"), axis_types=(AxisType.Auto,) * 2)
    grads = jnp.arange(32.0).reshape(8, 4) / 10.0
    norm = jax.shard_map(global_sq_norm, mesh=mesh, in_specs=P(("data", "fsdp")), out_specs=P())
    return norm(grads)
