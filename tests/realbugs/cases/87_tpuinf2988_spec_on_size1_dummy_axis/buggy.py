import jax
import jax.numpy as jnp
from jax.sharding import AxisType
from jax.sharding import PartitionSpec as P


def apply_scale(out_bnv, scale_1nv):
    return out_bnv * scale_1nv


def main():
    mesh = jax.make_mesh((2,), ("model",), axis_types=(AxisType.Auto,))
    out = jnp.arange(48.0).reshape(4, 4, 3)
    scale = jnp.expand_dims(jnp.arange(12.0).reshape(4, 3) / 10.0 + 1.0, 0)
    f = jax.shard_map(
        apply_scale,
        mesh=mesh,
        in_specs=(P(None, "model"), P("model")),
        out_specs=P(None, "model"),
    )
    return f(out, scale)
