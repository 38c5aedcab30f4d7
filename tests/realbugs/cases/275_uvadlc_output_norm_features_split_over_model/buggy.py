import jax
import jax.numpy as jnp
from jax.sharding import AxisType
from jax.sharding import PartitionSpec as P


def pre_norm(x, scale):
    # RMSNorm over the feature axis, written as for one device.
    rms = jnp.sqrt(jnp.mean(x**2, axis=-1, keepdims=True) + 1e-6)
    return x / rms * scale[None, :]


def main():
    mesh = jax.make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.Auto,) * 2)
    x = jnp.sin(jnp.arange(64.0)).reshape(4, 16) * jnp.arange(1.0, 17.0)[None, :]
    scale = jnp.linspace(0.5, 1.5, 16)
    f = jax.shard_map(pre_norm, mesh=mesh, in_specs=(P("data", "model"), P("model")), out_specs=P("data", "model"))
    return f(x, scale)
