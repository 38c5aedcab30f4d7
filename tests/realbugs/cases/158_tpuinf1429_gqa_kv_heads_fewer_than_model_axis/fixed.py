import jax
import jax.numpy as jnp
from jax.sharding import AxisType
from jax.sharding import PartitionSpec as P


def local_attention(q, k, v):
    # q: (tokens, local query heads, head_dim); k, v: (tokens, local kv heads, head_dim)
    scores = jnp.einsum("thd,skd->hts", q, k) / jnp.sqrt(q.shape[-1])
    probs = jax.nn.softmax(scores, axis=-1)
    return jnp.einsum("hts,skd->thd", probs, v)


def main():
    mesh = jax.make_mesh((4,), ("model",), axis_types=(AxisType.Auto,))
    head_spec = P(None, "model", None)
    attn = jax.shard_map(local_attention, mesh=mesh, in_specs=(head_spec, head_spec, head_spec), out_specs=head_spec)
    q = jnp.sin(jnp.arange(5 * 8 * 4, dtype=jnp.float32)).reshape(5, 8, 4)
    k = jnp.cos(jnp.arange(5 * 2 * 4, dtype=jnp.float32) / 3.0).reshape(5, 2, 4)
    v = jnp.arange(5 * 2 * 4, dtype=jnp.float32).reshape(5, 2, 4) / 40.0
    factor = mesh.shape["model"] // k.shape[1]
    k = jnp.repeat(k, factor, axis=1)
    v = jnp.repeat(v, factor, axis=1)
    return attn(q, k, v)
