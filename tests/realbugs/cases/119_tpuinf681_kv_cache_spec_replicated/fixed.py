import jax
import jax.numpy as jnp
from jax.sharding import AxisType
from jax.sharding import PartitionSpec as P


def decode_step(q, k_new, kv_cache):
    kv_cache = kv_cache.at[0].set(k_new)
    scores = jnp.einsum("th,psh->tph", q, kv_cache)
    return scores, kv_cache


def main():
    mesh = jax.make_mesh((2,), ("model",), axis_types=(AxisType.Auto,))
    q = jnp.arange(12.0).reshape(3, 4) / 10.0
    k_new = jnp.arange(8.0).reshape(2, 4) / 4.0
    kv_cache = jnp.arange(24.0).reshape(3, 2, 4) / 8.0
    step = jax.shard_map(
        decode_step,
        mesh=mesh,
        in_specs=(P(None, "model"), P(None, "model"), P(None, None, "model")),
        out_specs=(P(None, None, "model"), P(None, None, "model")),
    )
    return step(q, k_new, kv_cache)
