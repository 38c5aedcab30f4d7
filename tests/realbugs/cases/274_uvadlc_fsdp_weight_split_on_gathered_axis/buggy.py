import jax
import jax.numpy as jnp
from jax.sharding import AxisType
from jax.sharding import PartitionSpec as P


def gather(w):
    # FSDP: each device stores a slice of the weight's first axis; gather it back whole.
    return jax.lax.all_gather(w, "data", axis=0, tiled=True)


def mlp_fsdp(w1, w2, x):
    h = jax.nn.gelu(x @ gather(w1))
    return h @ gather(w2)


def main():
    mesh = jax.make_mesh((4,), ("data",), axis_types=(AxisType.Auto,))
    w1 = jnp.cos(jnp.arange(96.0)).reshape(8, 12) / 3.0
    w2 = jnp.sin(jnp.arange(96.0)).reshape(12, 8) / 3.0
    x = jnp.arange(64.0).reshape(8, 8) / 64.0
    f = jax.shard_map(
        mlp_fsdp,
        mesh=mesh,
        in_specs=(P(None, "data"), P("data", None), P("data")),
        out_specs=P("data"),
    )
    return f(w1, w2, x)
