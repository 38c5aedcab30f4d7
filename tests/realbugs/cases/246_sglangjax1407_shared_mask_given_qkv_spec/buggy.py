import jax
import jax.numpy as jnp
from jax.sharding import AxisType
from jax.sharding import PartitionSpec as P


def masked_attention(q, k, v, mask):
    # q, k, v: (batch, heads, seq, head_dim); mask: (seq, seq), shared by every batch and head
    scores = jnp.einsum("bhqd,bhkd->bhqk", q, k)
    scores = jnp.where(mask, scores, -1e9)
    return jnp.einsum("bhqk,bhkd->bhqd", jax.nn.softmax(scores, axis=-1), v)


def main():
    mesh = jax.make_mesh((2, 4), ("data", "tensor"), axis_types=(AxisType.Auto,) * 2)
    shape = (2, 4, 8, 4)
    q = jnp.sin(jnp.arange(64 * 4, dtype=jnp.float32)).reshape(shape)
    k = jnp.cos(jnp.arange(64 * 4, dtype=jnp.float32)).reshape(shape)
    v = jnp.linspace(-1.0, 1.0, 64 * 4).reshape(shape)
    mask = jnp.tril(jnp.ones((8, 8), dtype=bool))
    qkv_spec = P("data", "tensor", None, None)
    f = jax.shard_map(
        masked_attention,
        mesh=mesh,
        in_specs=(qkv_spec, qkv_spec, qkv_spec, P("data", "tensor")),
        out_specs=qkv_spec,
    )
    return f(q, k, v, mask)
