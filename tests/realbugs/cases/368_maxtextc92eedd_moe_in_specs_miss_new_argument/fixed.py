import jax
import jax.numpy as jnp
from jax.sharding import AxisType
from jax.sharding import PartitionSpec as P


def routed_mlp(x, gate_logits, pre_bias_logits, w0, wo):
    # route with the biased logits, weight the experts with the unbiased ones
    top = jnp.argmax(gate_logits, axis=-1)
    weight = jnp.take_along_axis(jax.nn.softmax(pre_bias_logits, axis=-1), top[..., None], axis=-1)
    hidden = jax.nn.relu(jnp.einsum("btd,edf->btef", x, w0))
    out = jnp.einsum("btef,efd->bted", hidden, wo)
    chosen = jnp.take_along_axis(out, top[..., None, None], axis=2)[:, :, 0]
    return chosen * weight


def main():
    mesh = jax.make_mesh((4,), ("data",), axis_types=(AxisType.Auto,))
    x = jnp.sin(jnp.arange(8 * 3 * 4, dtype=jnp.float32)).reshape(8, 3, 4)
    pre_bias_logits = jnp.cos(jnp.arange(8 * 3 * 2, dtype=jnp.float32)).reshape(8, 3, 2)
    gate_logits = pre_bias_logits + jnp.array([0.3, -0.3])[None, None]
    w0 = jnp.linspace(-1.0, 1.0, 2 * 4 * 5).reshape(2, 4, 5)
    wo = jnp.linspace(1.0, -1.0, 2 * 5 * 4).reshape(2, 5, 4)
    act = P("data", None, None)
    layer = jax.shard_map(
        routed_mlp,
        mesh=mesh,
        in_specs=(act, act, act, P(None, None, None), P(None, None, None)),
        out_specs=act,
        check_vma=False,
    )
    return layer(x, gate_logits, pre_bias_logits, w0, wo)
