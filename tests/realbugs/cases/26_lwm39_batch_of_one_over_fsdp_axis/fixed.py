import jax
import jax.numpy as jnp
from jax.sharding import AxisType
from jax.sharding import PartitionSpec as P


def attend(q):
    return q * 2.0


def main():
    mesh = jax.make_mesh((1, 1, 4), ("dp", "fsdp", "sp"), axis_types=(AxisType.Auto,) * 3)
    spec = P(("dp", "fsdp"), "sp", None)
    f = jax.shard_map(attend, mesh=mesh, in_specs=spec, out_specs=spec)
    q = jnp.arange(32.0).reshape(1, 8, 4)
    return f(q)
