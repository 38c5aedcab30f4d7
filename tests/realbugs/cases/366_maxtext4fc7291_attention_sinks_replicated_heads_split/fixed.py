import jax
import jax.numpy as jnp
from jax.sharding import AxisType
from jax.sharding import PartitionSpec as P


def attention_with_sinks(q, k, v, sinks):
    # q, k, v: (batch, heads, length, head_dim); sinks: one learned logit per head
    logits = jnp.einsum("bhqd,bhkd->bhqk", q, k) / jnp.sqrt(q.shape[-1])
    m = jnp.max(logits, axis=-1, keepdims=True)
    weights = jnp.exp(logits - m)
    denom = jnp.sum(weights, axis=-1, keepdims=True) + jnp.exp(sinks[None, :, None, None] - m)
    return jnp.einsum("bhqk,bhkd->bhqd", weights / denom, v)


def main():
    mesh = jax.make_mesh((4,), ("tensor",), axis_types=(AxisType.Auto,))
    shape = (2, 8, 4, 4)
    q = jnp.sin(jnp.arange(64 * 4, dtype=jnp.float32)).reshape(shape)
    k = jnp.cos(jnp.arange(64 * 4, dtype=jnp.float32) * 0.7).reshape(shape)
    v = jnp.sin(jnp.arange(64 * 4, dtype=jnp.float32) * 1.3).reshape(shape)
    sinks = jnp.linspace(-1.0, 1.0, 8)
    heads = P(None, "tensor", None, None)
    attend = jax.shard_map(
        attention_with_sinks,
        mesh=mesh,
        in_specs=(heads, heads, heads, P("tensor")),
        out_specs=heads,
        check_vma=False,
    )
    return attend(q, k, v, sinks)
