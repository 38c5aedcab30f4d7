import jax
import jax.numpy as jnp
from jax.sharding import AxisType
from jax.sharding import PartitionSpec as P


def loss_dp(params, local_batch):
    w, b = params
    inputs, targets = local_batch
    predictions = jnp.tanh(inputs @ w + b[None, :])
    local_loss = jnp.mean(jnp.sum((predictions - targets) ** 2, axis=-1))
    return jax.lax.pmean(local_loss, "batch")


def main():
    mesh = jax.make_mesh((4,), ("batch",), axis_types=(AxisType.Auto,))
    params = (jnp.arange(16.0).reshape(4, 4) / 20.0, jnp.linspace(-0.5, 0.5, 4))
    inputs = jnp.arange(32.0).reshape(8, 4) / 10.0
    targets = jnp.cos(jnp.arange(32.0)).reshape(8, 4)
    # replicate the params on all devices, shard the data batch over devices
    loss = jax.shard_map(loss_dp, mesh=mesh, in_specs=(P("batch"), P("batch")), out_specs=P())
    return loss(params, (inputs, targets))
