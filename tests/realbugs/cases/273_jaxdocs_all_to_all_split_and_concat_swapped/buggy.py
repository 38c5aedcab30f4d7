import jax
import jax.numpy as jnp
from jax.sharding import AxisType
from jax.sharding import PartitionSpec as P


def ulysses_attention(q, k, v):
    # Blocks arrive split along the sequence: (seq / 4, heads, dim). Trade them for
    # blocks split along the heads, (seq, heads / 4, dim), attend, and trade back.
    def to_heads(t):
        return jax.lax.all_to_all(t, "sp", split_axis=0, concat_axis=1, tiled=True)

    q, k, v = to_heads(q), to_heads(k), to_heads(v)
    scores = jnp.einsum("qhd,khd->hqk", q, k) / jnp.sqrt(q.shape[-1])
    out = jnp.einsum("hqk,khd->qhd", jax.nn.softmax(scores, axis=-1), v)
    return jax.lax.all_to_all(out, "sp", split_axis=0, concat_axis=1, tiled=True)


def main():
    mesh = jax.make_mesh((4,), ("sp",), axis_types=(AxisType.Auto,))
    q = jnp.sin(jnp.arange(64.0)).reshape(8, 4, 2)
    k = jnp.cos(jnp.arange(64.0)).reshape(8, 4, 2)
    v = jnp.arange(64.0).reshape(8, 4, 2) / 64.0
    f = jax.shard_map(ulysses_attention, mesh=mesh, in_specs=P("sp"), out_specs=P("sp"))
    return f(q, k, v)
