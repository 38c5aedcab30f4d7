import jax
import jax.numpy as jnp
from jax.sharding import AxisType
from jax.sharding import PartitionSpec as P


def expert_mlp(x, w0, wo):
    # token-wise MLP: every token of the local sequence chunk goes through it
    return jnp.einsum("bsf,fd->bsd", jax.nn.gelu(jnp.einsum("bsd,df->bsf", x, w0)), wo)


def main():
    # context parallelism: the sequence is split over the 'context' axis
    mesh = jax.make_mesh((2, 4), ("data", "context"), axis_types=(AxisType.Auto,) * 2)
    x = jnp.sin(jnp.arange(2 * 8 * 4, dtype=jnp.float32)).reshape(2, 8, 4)
    w0 = jnp.linspace(-1.0, 1.0, 4 * 6).reshape(4, 6)
    wo = jnp.linspace(1.0, -1.0, 6 * 4).reshape(6, 4)
    layer = jax.shard_map(
        expert_mlp,
        mesh=mesh,
        in_specs=(P("data", "context", None), P(None, None), P(None, None)),
        out_specs=P("data", None, None),
        check_vma=False,
    )
    return layer(x, w0, wo)
