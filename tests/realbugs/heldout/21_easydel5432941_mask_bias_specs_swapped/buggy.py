import jax
import jax.numpy as jnp
from jax.sharding import AxisType
from jax.sharding import PartitionSpec as P


def attention(q, k, v, mask, bias):
    scores = jnp.einsum("bhqd,bhkd->bhqk", q, k) / jnp.sqrt(q.shape[-1]) + bias
    scores = jnp.where(mask, scores, -1e9)
    return jnp.einsum("bhqk,bhkd->bhqd", jax.nn.softmax(scores, axis=-1), v)


def main():
    mesh = jax.make_mesh((2, 4), ("dp", "tp"), axis_types=(AxisType.Auto,) * 2)
    qkv_spec = P("dp", "tp", None, None)
    bias_spec = P("dp", "tp", None, None)
    mask_spec = P("dp", None, None, None)
    q = jnp.arange(256.0).reshape(2, 4, 8, 4) / 256.0
    k = jnp.flip(q, axis=2)
    v = jnp.cos(q)
    mask = jnp.tril(jnp.ones((8, 8), dtype=bool))[None, None].repeat(2, axis=0)
    bias = jnp.sin(jnp.arange(512.0)).reshape(2, 4, 8, 8)
    attn = jax.shard_map(
        attention,
        mesh=mesh,
        in_specs=(qkv_spec, qkv_spec, qkv_spec, bias_spec, mask_spec),
        out_specs=qkv_spec,
    )
    return attn(q, k, v, mask, bias)
