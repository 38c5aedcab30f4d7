import jax
import jax.numpy as jnp
from jax.sharding import AxisType
from jax.sharding import PartitionSpec as P


def partial_scores(x, w):
    # x: (rows, features) of this data group and model shard; w: this model shard's weights
    local = jnp.sum(x[:, None, :] * w[None, :, :], axis=-1)
    return jax.lax.psum(local, axis_name="model")


def main():
    mesh = jax.make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.Auto,) * 2)
    x = jnp.arange(4 * 8, dtype=jnp.float32).reshape(4, 8) / 10.0
    w = jnp.linspace(0.1, 1.2, 4 * 8).reshape(4, 8)
    f = jax.shard_map(
        partial_scores,
        mesh=mesh,
        in_specs=(P("data", "model"), P("data", "model")),
        out_specs=P("data", None),
    )
    return f(x, w)
