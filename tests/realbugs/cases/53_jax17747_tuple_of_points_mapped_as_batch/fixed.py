import jax
import jax.numpy as jnp


def distance(point, centre):
    return jnp.sqrt(jnp.sum((point - centre) ** 2))


def main():
    points = jnp.stack([jnp.arange(3.0) * (i + 1) for i in range(5)])
    centre = jnp.array([1.0, 2.0, 3.0])
    return jax.vmap(distance, in_axes=(0, None))(points, centre)
