import jax
import jax.numpy as jnp


def scale_shard(x, factor, offset):
    # factor is a Python int that picks a branch
    if factor > 5:
        return x * 100 + offset
    return x * factor + offset


def main():
    n = jax.local_device_count()
    x = jnp.arange(n * 3, dtype=jnp.float32).reshape(n, 3)
    offset = jnp.array(0.5)
    return jax.pmap(scale_shard, in_axes=(0, None, None))(x, 7, offset)
