import jax
import jax.numpy as jnp
from jax.sharding import AxisType
from jax.sharding import PartitionSpec as P


def down_proj(x, w2):
    # w2 is stored (hidden, intermediate) and used transposed: contract on intermediate.
    partial = jnp.einsum("tk,nk->tn", x, w2)
    return jax.lax.psum(partial, axis_name="model")


def main():
    mesh = jax.make_mesh((2,), ("model",), axis_types=(AxisType.Auto,))
    x = jnp.arange(24.0).reshape(3, 8) / 24.0
    w2 = jnp.cos(jnp.arange(48.0)).reshape(6, 8)
    f = jax.shard_map(
        down_proj,
        mesh=mesh,
        in_specs=(P(None, "model"), P(None, "model")),
        out_specs=P(),
        check_vma=False,
    )
    return f(x, w2)
