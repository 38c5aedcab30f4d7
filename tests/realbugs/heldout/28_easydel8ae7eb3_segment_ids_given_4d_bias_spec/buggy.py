import jax
import jax.numpy as jnp
from jax.sharding import AxisType
from jax.sharding import PartitionSpec as P


def attention(q, k, v, segment_ids):
    # q, k, v: (batch, heads, seq, dim); segment_ids: (batch, seq)
    same = segment_ids[:, None, :, None] == segment_ids[:, None, None, :]
    scores = jnp.einsum("bhqd,bhkd->bhqk", q, k) / jnp.sqrt(q.shape[-1])
    scores = jnp.where(same, scores, -1e9)
    return jnp.einsum("bhqk,bhkd->bhqd", jax.nn.softmax(scores, axis=-1), v)


def main():
    mesh = jax.make_mesh((2, 4), ("dp", "tp"), axis_types=(AxisType.Auto,) * 2)
    qps = P("dp", "tp", None, None)
    bps = P("dp", "tp", None, None)
    q = jnp.sin(jnp.arange(2 * 4 * 6 * 4, dtype=jnp.float32)).reshape(2, 4, 6, 4)
    k = jnp.cos(q)
    v = q * 2.0
    segment_ids = jnp.array([[0, 0, 0, 1, 1, 1], [0, 0, 1, 1, 1, 1]])
    attn = jax.shard_map(attention, mesh=mesh, in_specs=(qps, qps, qps, bps), out_specs=qps)
    return attn(q, k, v, segment_ids)
