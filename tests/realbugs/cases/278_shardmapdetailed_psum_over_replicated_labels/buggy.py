import jax
import jax.numpy as jnp
from jax.sharding import AxisType
from jax.sharding import PartitionSpec as P


def class_counts(labels):
    # Count this device's labels per class, then add the counts of every device.
    local = jnp.sum(jax.nn.one_hot(labels, 5), axis=0)
    return jax.lax.psum(local, "batch")


def main():
    mesh = jax.make_mesh((4,), ("batch",), axis_types=(AxisType.Auto,))
    labels = jnp.array([0, 1, 1, 2, 4, 4, 4, 3, 0, 2, 2, 2, 1, 0, 4, 3])
    f = jax.shard_map(class_counts, mesh=mesh, in_specs=P(), out_specs=P())
    return f(labels)
