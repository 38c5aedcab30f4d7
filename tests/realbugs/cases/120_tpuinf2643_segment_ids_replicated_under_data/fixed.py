import jax
import jax.numpy as jnp
from jax.sharding import AxisType
from jax.sharding import PartitionSpec as P


def vision_attention(q, k, v, segment_ids):
    s = jnp.einsum("bhqd,bhkd->bhqk", q, k)
    same = segment_ids[:, None, :, None] == segment_ids[:, None, None, :]
    s = jnp.where(same, s, -1e9)
    return jnp.einsum("bhqk,bhkd->bhqd", jax.nn.softmax(s, axis=-1), v)


def main():
    mesh = jax.make_mesh((2, 2), ("data", "model"), axis_types=(AxisType.Auto,) * 2)
    q = jnp.sin(jnp.arange(96.0)).reshape(4, 4, 3, 2)
    k = jnp.cos(jnp.arange(96.0)).reshape(4, 4, 3, 2)
    v = jnp.arange(96.0).reshape(4, 4, 3, 2) / 96.0
    segment_ids = jnp.array([[0, 0, 1], [0, 1, 1], [0, 0, 0], [1, 1, 0]])
    qkv = P("data", "model", None, None)
    attn = jax.shard_map(
        vision_attention,
        mesh=mesh,
        in_specs=(qkv, qkv, qkv, P("data", None)),
        out_specs=qkv,
    )
    return attn(q, k, v, segment_ids)
