import jax
import jax.numpy as jnp
from jax.sharding import AxisType
from jax.sharding import PartitionSpec as P


def step(w, b, x):
    # x: this device's rows of the batch
    return jnp.tanh(x @ w + b)


def main():
    mesh = jax.make_mesh((8,), ("data",), axis_types=(AxisType.Auto,))
    w = jnp.linspace(-1.0, 1.0, 4 * 3).reshape(4, 3)
    b = jnp.array([[0.1, -0.2, 0.3]])
    x = jnp.sin(jnp.arange(16 * 4, dtype=jnp.float32)).reshape(16, 4)
    f = jax.shard_map(step, mesh=mesh, in_specs=(P(), P(), P("data", None)), out_specs=P("data", None))
    return f(w, b, x)
