import jax
import jax.numpy as jnp
from jax.sharding import AxisType
from jax.sharding import PartitionSpec as P


def expert_up(inputs, w0):
    # every token through every expert's up-projection: (batch, seq, experts, mlp)
    return jnp.einsum("bsd,edf->bsef", inputs, w0)


def main():
    mesh = jax.make_mesh((2, 4), ("data", "tensor"), axis_types=(AxisType.Auto,) * 2)
    inputs = jnp.sin(jnp.arange(4 * 3 * 8, dtype=jnp.float32)).reshape(4, 3, 8)
    w0 = jnp.cos(jnp.arange(2 * 8 * 16, dtype=jnp.float32)).reshape(2, 8, 16)
    gmm = jax.shard_map(
        expert_up,
        mesh=mesh,
        in_specs=(P("data", None, "tensor"), P(None, None, "tensor")),
        out_specs=P("data", None, None, "tensor"),
    )
    return gmm(inputs, w0)
