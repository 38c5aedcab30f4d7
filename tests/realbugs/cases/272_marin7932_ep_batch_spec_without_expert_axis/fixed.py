import jax
import jax.numpy as jnp
from jax.sharding import AxisType
from jax.sharding import PartitionSpec as P


def routed_experts(x, gates, w):
    # Every expert shard reads the tokens of its data group, applies its own expert and
    # sends each token's weighted output back to the shard that owns the token.
    tokens = jax.lax.all_gather(x, "expert", tiled=True)
    weights = jax.lax.all_gather(gates, "expert", tiled=True)
    e = jax.lax.axis_index("expert")
    gate = jax.lax.dynamic_index_in_dim(weights, e, axis=1, keepdims=False)
    out = gate[:, None] * (tokens @ w[0])
    return jax.lax.psum_scatter(out, "expert", scatter_dimension=0, tiled=True)


def main():
    mesh = jax.make_mesh((2, 4), ("data", "expert"), axis_types=(AxisType.Auto,) * 2)
    x = jnp.arange(24.0).reshape(8, 3) / 10.0
    gates = jax.nn.softmax(jnp.cos(jnp.arange(32.0)).reshape(8, 4))
    w = jnp.sin(jnp.arange(36.0)).reshape(4, 3, 3)
    batch_spec = P(("data", "expert"))
    f = jax.shard_map(
        routed_experts,
        mesh=mesh,
        in_specs=(batch_spec, batch_spec, P("expert")),
        out_specs=P(("data", "expert")),
    )
    return f(x, gates, w)
