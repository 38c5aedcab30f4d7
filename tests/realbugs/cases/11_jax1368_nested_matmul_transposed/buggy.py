import jax
import jax.numpy as jnp


def vv(x, y):
    return jnp.vdot(x, y)


def main():
    mv = jax.vmap(vv, (0, None), 0)
    mm = jax.vmap(mv, (None, 1), 0)
    a = jnp.arange(9.0).reshape(3, 3)
    b = jnp.arange(9.0, 18.0).reshape(3, 3)
    return mm(a, b)
