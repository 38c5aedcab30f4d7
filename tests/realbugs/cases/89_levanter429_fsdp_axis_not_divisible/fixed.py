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
    n = w.shape[0]
    pad = -n % mesh.shape["data"]
    w_p, g_p = (jnp.pad(a, ((0, pad), (0, 0))) for a in (w, g))
    update = jax.shard_map(sgd_update, mesh=mesh, in_specs=P("data"), out_specs=P("data"))
    return update(w_p, g_p)[:n]
