import jax
import jax.numpy as jnp
from jax.sharding import AxisType
from jax.sharding import PartitionSpec as P


def residual(h, x):
    # Element-wise: both local blocks must cover the same rows and columns.
    return h + x


def main():
    mesh = jax.make_mesh((4, 2), ("dp", "mp"), axis_types=(AxisType.Auto,) * 2)
    h = jnp.arange(48.0).reshape(8, 6)
    x = jnp.full((8, 6), 2.0)
    f = jax.shard_map(residual, mesh=mesh, in_specs=(P("dp", "mp"), P("dp", "mp")), out_specs=P("dp", "mp"))
    return f(h, x)
