import jax
import jax.numpy as jnp
from jax.sharding import AxisType
from jax.sharding import PartitionSpec as P


def gemm_tp(inputs, W, b):
    block_result = jnp.dot(inputs, W)
    return jax.lax.psum_scatter(block_result, "feats", scatter_dimension=1, tiled=True) + b[None, :]


def main():
    mesh = jax.make_mesh((8,), ("feats",), axis_types=(AxisType.Auto,))
    inputs = jnp.sin(jnp.arange(4 * 16, dtype=jnp.float32)).reshape(4, 16)
    W = jnp.cos(jnp.arange(16 * 16, dtype=jnp.float32) * 0.1).reshape(16, 16) / 4.0
    b = jnp.linspace(-1.0, 1.0, 16)
    layer = jax.shard_map(
        gemm_tp,
        mesh=mesh,
        in_specs=(P(None, "feats"), P("feats", None), P("feats")),
        out_specs=P(None, "feats"),
    )
    return layer(inputs, W, b)
