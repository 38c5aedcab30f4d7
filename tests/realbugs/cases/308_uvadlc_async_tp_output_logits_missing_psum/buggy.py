import jax
import jax.numpy as jnp
from jax.sharding import AxisType
from jax.sharding import PartitionSpec as P


def output_layer(h, w_out, b_out):
    # h: this device's hidden features (rows, H / 4); w_out: the matching H / 4 rows of the kernel.
    logits = h @ w_out
    return logits + b_out


def main():
    mesh = jax.make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.Auto,) * 2)
    h = jnp.tanh(jnp.arange(4 * 8, dtype=jnp.float32) * 0.2).reshape(4, 8)
    w_out = jnp.sin(jnp.arange(8 * 3, dtype=jnp.float32)).reshape(8, 3) / 2.0
    b_out = jnp.array([[0.1, -0.2, 0.3]], dtype=jnp.float32)
    f = jax.shard_map(
        output_layer,
        mesh=mesh,
        in_specs=(P("data", "model"), P("model", None), P()),
        out_specs=P("data", None),
        check_vma=False,
    )
    return f(h, w_out, b_out)
