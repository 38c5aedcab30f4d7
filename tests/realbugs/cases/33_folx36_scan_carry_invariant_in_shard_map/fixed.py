import jax
import jax.numpy as jnp
from jax.sharding import AxisType
from jax.sharding import PartitionSpec as P


def block_sum(x):
    def step(acc, row):
        return acc + row, None

    acc, _ = jax.lax.scan(step, jax.lax.pcast(jnp.zeros(3), "i", to="varying"), x)
    return acc[None]


def main():
    mesh = jax.make_mesh((4,), ("i",), axis_types=(AxisType.Auto,))
    f = jax.shard_map(block_sum, mesh=mesh, in_specs=P("i"), out_specs=P("i"))
    return f(jnp.arange(24.0).reshape(8, 3))
