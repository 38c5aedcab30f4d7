import jax
import jax.numpy as jnp
from jax.sharding import AxisType
from jax.sharding import PartitionSpec as P


def attention(q, k, v):
    scores = jnp.einsum("bqd,bkd->bqk", q, k) / 2.0
    return jnp.einsum("bqk,bkd->bqd", jax.nn.softmax(scores, axis=-1), v)


def main():
    mesh = jax.make_mesh((1, 2), ("dp", "fsdp"), axis_types=(AxisType.Auto,) * 2)
    spec = P(("dp", "fsdp"), None, None)
    f = jax.shard_map(attention, mesh=mesh, in_specs=(spec, spec, spec), out_specs=spec)
    q = jnp.arange(64.0).reshape(2, 8, 4) / 64.0
    k = jnp.arange(64.0, 128.0).reshape(2, 8, 4) / 64.0
    v = jnp.arange(128.0, 192.0).reshape(2, 8, 4) / 64.0
    return f(q, k, v)
