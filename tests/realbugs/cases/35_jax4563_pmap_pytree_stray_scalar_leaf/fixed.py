import jax
import jax.numpy as jnp


def ident(x):
    return x


def main():
    z = [jnp.ones((4, n)) for n in range(1, 4)]
    x = [z, z, z, z]
    return jax.pmap(ident)(x)
