import jax
import jax.numpy as jnp
from jax.sharding import AxisType
from jax.sharding import PartitionSpec as P


def dense(x, w, b):
    return jax.nn.relu(x @ w + b[None, :])


def main():
    mesh = jax.make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.Auto,) * 2)
    x = jnp.sin(jnp.arange(8 * 5, dtype=jnp.float32)).reshape(8, 5)
    w = jnp.cos(jnp.arange(5 * 12, dtype=jnp.float32)).reshape(5, 12) / 3.0
    b = jnp.linspace(-0.2, 0.2, 12)
    f = jax.shard_map(
        dense,
        mesh=mesh,
        in_specs=(P("batch", None), P(None, "model"), P("model")),
        out_specs=P("batch", "model"),
    )
    return f(x, w, b)
