import jax
import jax.numpy as jnp


def scaled_dot(pair, koeff):
    return koeff * jnp.dot(pair["u"], pair["v"])


def main():
    us = jnp.arange(12.0).reshape(4, 3) / 4.0  # 4 vectors of size 3, one per row
    vs = jnp.arange(12.0).reshape(3, 4) / 8.0  # 4 vectors of size 3, one per column
    return jax.vmap(scaled_dot, in_axes=(0, None))({"u": us, "v": vs}, 0.5)
