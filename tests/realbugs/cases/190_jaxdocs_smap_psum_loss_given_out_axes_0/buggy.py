import jax
import jax.numpy as jnp
from jax.sharding import AxisType


def mse(pred, target):
    # each instance sums its block; psum makes the total the same on every device
    sq = jnp.sum((pred - target) ** 2)
    count = jax.lax.psum(pred.size, "data")
    return jax.lax.psum(sq, "data") / count


def main():
    n = jax.device_count()
    mesh = jax.make_mesh((n,), ("data",), axis_types=(AxisType.Auto,))
    pred = jnp.sin(jnp.arange(n * 3, dtype=jnp.float32)).reshape(n * 3)
    target = jnp.cos(jnp.arange(n * 3, dtype=jnp.float32)).reshape(n * 3)
    with jax.set_mesh(mesh):
        return jax.smap(mse, in_axes=0, out_axes=0, axis_name="data")(pred, target)
