import jax
import jax.numpy as jnp
from jax.sharding import AxisType
from jax.sharding import PartitionSpec as P


def dense_row_parallel(x, w, b):
    # x: (batch, hidden / tp), w: (hidden / tp, out), b: (out,) the same on every device
    y = x @ w + b[None, :]
    return jax.lax.psum(y, "tp")


def main():
    mesh = jax.make_mesh((2, 4), ("dp", "tp"), axis_types=(AxisType.Auto,) * 2)
    x = jnp.linspace(-1.0, 1.0, 4 * 8).reshape(4, 8)
    w = jnp.cos(jnp.arange(8 * 3, dtype=jnp.float32)).reshape(8, 3)
    b = jnp.array([1.0, -2.0, 0.5])
    f = jax.shard_map(
        dense_row_parallel,
        mesh=mesh,
        in_specs=(P("dp", "tp"), P("tp", None), P()),
        out_specs=P("dp", None),
    )
    return f(x, w, b)
