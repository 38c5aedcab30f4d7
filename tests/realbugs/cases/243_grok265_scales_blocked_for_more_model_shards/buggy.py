import jax
import jax.numpy as jnp
from jax.sharding import AxisType
from jax.sharding import PartitionSpec as P


def dequantize(weight, scales):
    # weight: int8 (experts, rows, cols); scales: one row of scales per block of rows
    return weight.astype(scales.dtype) * scales


def main():
    mesh = jax.make_mesh((4, 2), ("data", "model"), axis_types=(AxisType.Auto,) * 2)
    # the checkpoint was quantized for 4-way model parallelism: 4 scale blocks per expert
    weight = (jnp.arange(2 * 16 * 4) % 7 - 3).astype(jnp.int8).reshape(2, 16, 4)
    scales = jnp.linspace(0.5, 2.0, 2 * 4 * 4).reshape(2, 4, 4)
    f = jax.shard_map(
        dequantize,
        mesh=mesh,
        in_specs=(P(None, "model", None), P(None, "model", None)),
        out_specs=P(None, "model", None),
    )
    return f(weight, scales)
