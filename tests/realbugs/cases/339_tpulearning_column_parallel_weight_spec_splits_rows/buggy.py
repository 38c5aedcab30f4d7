import jax
import jax.numpy as jnp
from jax.sharding import AxisType
from jax.sharding import PartitionSpec as P


def sharded_matmul(x, a):
    x = jax.lax.all_gather(x, axis_name="model", axis=1, tiled=True)
    return x @ a


def main():
    mesh = jax.make_mesh((2, 2), ("data", "model"), axis_types=(AxisType.Auto,) * 2)
    x = jnp.sin(jnp.arange(4 * 10, dtype=jnp.float32)).reshape(4, 10)
    a = jnp.cos(jnp.arange(10 * 10, dtype=jnp.float32)).reshape(10, 10)
    f = jax.shard_map(
        sharded_matmul,
        mesh=mesh,
        in_specs=(P(None, "model"), P("model", None)),
        out_specs=P(None, "model"),
    )
    return f(x, a)
