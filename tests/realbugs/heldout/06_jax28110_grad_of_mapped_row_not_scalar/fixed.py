import jax
import jax.numpy as jnp


def potential(x):
    return jnp.sin(x) * x


def main():
    x = jnp.linspace(0.0, 1.0, 6).reshape(6, 1)  # N points stored as a column
    second = jax.vmap(jax.vmap(jax.grad(jax.grad(potential))))
    return second(x)
