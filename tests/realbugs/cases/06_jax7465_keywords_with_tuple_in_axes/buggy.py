import jax
import jax.numpy as jnp


def f(a, b, c):
    return 2 * a, 3 * b + c


def main():
    a = jnp.array([1.0, 2.0])
    b = jnp.array([2.0, 4.0])
    return jax.vmap(f, in_axes=(0, 0, None))(a=a, b=b, c=0.5)
