import jax
import jax.numpy as jnp
from jax.sharding import AxisType
from jax.sharding import PartitionSpec as P


def logits_layer(activations, w_vocab):
    # activations split over 'data' (batch), w_vocab split over 'model' (vocab columns):
    # no contraction over a sharded dimension, so no communication
    return activations @ w_vocab


def main():
    mesh = jax.make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.Auto,) * 2)
    activations = jnp.sin(jnp.arange(6 * 8, dtype=jnp.float32) * 0.4).reshape(6, 8)
    w_vocab = jnp.cos(jnp.arange(8 * 16, dtype=jnp.float32) * 0.3).reshape(8, 16)
    f = jax.shard_map(
        logits_layer,
        mesh=mesh,
        in_specs=(P("data", None), P(None, "model")),
        out_specs=P(None, "model"),
    )
    return f(activations, w_vocab)
