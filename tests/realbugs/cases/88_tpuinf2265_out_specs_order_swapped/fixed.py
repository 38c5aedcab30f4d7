import jax
import jax.numpy as jnp
from jax.sharding import AxisType
from jax.sharding import PartitionSpec as P


def mla_step(q, k, cache):
    new_cache = cache + jnp.sum(k, axis=0)[None, :]
    attn_out = jnp.einsum("thd,td->th", q, k)
    return new_cache, attn_out


def main():
    mesh = jax.make_mesh((2, 2), ("data", "model"), axis_types=(AxisType.Auto,) * 2)
    q = jnp.arange(48.0).reshape(4, 4, 3) / 10.0
    k = jnp.arange(12.0).reshape(4, 3) / 10.0
    cache = jnp.arange(18.0).reshape(6, 3)
    f = jax.shard_map(
        mla_step,
        mesh=mesh,
        in_specs=(P("data", "model"), P("data"), P("data")),
        out_specs=(P("data"), P("data", "model")),
    )
    return f(q, k, cache)
