import jax
import jax.numpy as jnp
from jax.sharding import AxisType
from jax.sharding import PartitionSpec as P


def gram(a_rows):
    return jax.lax.psum(a_rows.T @ a_rows, "S")


def main():
    mesh = jax.make_mesh((2,), ("S",), axis_types=(AxisType.Auto,))
    a = jnp.arange(32.0).reshape(8, 4) / 8.0
    f = jax.shard_map(gram, mesh=mesh, in_specs=P("S"), out_specs=P())
    return f(a)
