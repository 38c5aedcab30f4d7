import jax
import jax.numpy as jnp
from jax.sharding import AxisType
from jax.sharding import PartitionSpec as P


def sgd_update(w, g):
    return w - 0.1 * g


def main():
    mesh = jax.make_mesh((5,), ("data",), axis_types=(AxisType.Auto,))
    w = jnp.arange(256.0).reshape(64, 4) / 100.0
    g = jnp.arange(256.0)[::-1].reshape(64, 4) / 1000.0
    update = jax.shard_map(sgd_update, mesh=mesh, in_specs=P("data"), out_specs=P("data"))
    return update(w, g)
