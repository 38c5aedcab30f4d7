import jax
import jax.numpy as jnp


def share(v):
    # each value's share of the total over every device and every local element
    return v / jax.lax.psum(v, axis_name="batch")


def main():
    arr = jnp.arange(1.0, 25.0).reshape(4, 6)  # 4 devices, 6 values each
    norm = jax.pmap(jax.vmap(share, axis_name="batch"), axis_name="p")
    return norm(arr)
