import jax
import jax.numpy as jnp


def scale(v, koeff):
    scaled = koeff * v
    return scaled, jnp.linalg.norm(scaled)


def main():
    v1s = jnp.arange(24.0).reshape(8, 3) / 10.0
    return jax.vmap(scale, in_axes=(0, None), out_axes=(1, 0))(v1s, 2.0)
