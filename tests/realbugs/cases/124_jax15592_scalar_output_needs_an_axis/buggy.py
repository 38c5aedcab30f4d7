import jax
import jax.numpy as jnp
from jax.sharding import AxisType
from jax.sharding import PartitionSpec as P


def shard_loss(preds, targets):
    return jnp.mean((preds - targets) ** 2)


def main():
    mesh = jax.make_mesh((4,), ("batch",), axis_types=(AxisType.Auto,))
    preds = jnp.arange(16.0).reshape(8, 2) / 4.0
    targets = jnp.ones((8, 2))
    losses = jax.shard_map(shard_loss, mesh=mesh, in_specs=P("batch"), out_specs=P("batch"))
    return losses(preds, targets)
