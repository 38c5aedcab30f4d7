import jax
import jax.numpy as jnp
from jax.sharding import AxisType
from jax.sharding import PartitionSpec as P


def layer(x, weights, bias):
    return jax.nn.sigmoid(jax.lax.psum(x @ weights, "x") + bias)


def main():
    mesh = jax.make_mesh((8,), ("x",), axis_types=(AxisType.Auto,))
    layer_sharded = jax.shard_map(layer, mesh=mesh, in_specs=(P("x"), P(), P()), out_specs=P())
    x = jnp.sin(jnp.arange(32, dtype=jnp.float32))
    weights = jnp.cos(jnp.arange(32 * 4, dtype=jnp.float32)).reshape(32, 4) / 8.0
    bias = jnp.linspace(-0.5, 0.5, 4)
    return layer_sharded(x, weights, bias)
