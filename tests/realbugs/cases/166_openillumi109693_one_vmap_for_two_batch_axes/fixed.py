import jax
import jax.numpy as jnp


def compose(a, b):
    return jnp.dot(a, b)


def main():
    angles = jnp.linspace(0.0, 1.5, 12).reshape(3, 4)
    c, s = jnp.cos(angles), jnp.sin(angles)
    rotations = jnp.stack([jnp.stack([c, -s], -1), jnp.stack([s, c], -1)], -2)
    strains = jnp.arange(48.0).reshape(3, 4, 2, 2) / 10.0
    return jax.vmap(jax.vmap(compose))(rotations, strains)
