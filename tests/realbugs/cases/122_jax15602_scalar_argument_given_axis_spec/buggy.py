import jax
import jax.numpy as jnp
from jax.sharding import AxisType
from jax.sharding import PartitionSpec as P


def sgd_update(w, lr):
    return w - lr * jnp.sign(w)


def main():
    mesh = jax.make_mesh((4,), ("x",), axis_types=(AxisType.Auto,))
    w = jnp.arange(16.0).reshape(8, 2) - 7.0
    lr = jnp.float32(0.5)
    update = jax.shard_map(sgd_update, mesh=mesh, in_specs=(P("x"), P("x")), out_specs=P("x"))
    return update(w, lr)
