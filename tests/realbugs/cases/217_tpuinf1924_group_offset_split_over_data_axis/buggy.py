import jax
import jax.numpy as jnp
from jax.sharding import AxisType
from jax.sharding import PartitionSpec as P


def moe_mlp_local(x, w1, w2, expert_bias, group_offset):
    # Tensor parallel: w1 split by columns, w2 by rows, partial sums reduced over 'model'.
    hidden = jax.nn.relu(x @ w1)
    out = jax.lax.psum(hidden @ w2, axis_name="model")
    # The first expert this shard owns (always 0 under tensor parallelism).
    return out + expert_bias[group_offset[0]][None, :]


def tensor_parallel_mlp(mesh, x, w1, w2, expert_bias):
    data_p_spec = P("data")
    group_offset = jnp.array([0])
    f = jax.shard_map(
        moe_mlp_local,
        mesh=mesh,
        in_specs=(data_p_spec, P(None, "model"), P("model", None), P(), data_p_spec),
        out_specs=data_p_spec,
    )
    return f(x, w1, w2, expert_bias, group_offset)


def main():
    # Attention data parallelism turned on: the 'data' axis now has size 2.
    mesh = jax.make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.Auto,) * 2)
    x = jnp.sin(jnp.arange(8 * 6, dtype=jnp.float32)).reshape(8, 6)
    w1 = jnp.cos(jnp.arange(6 * 16, dtype=jnp.float32) * 0.3).reshape(6, 16) / 4.0
    w2 = jnp.sin(jnp.arange(16 * 6, dtype=jnp.float32) * 0.2).reshape(16, 6) / 4.0
    expert_bias = jnp.linspace(-1.0, 1.0, 3 * 6).reshape(3, 6)
    return tensor_parallel_mlp(mesh, x, w1, w2, expert_bias)
