import jax
import jax.numpy as jnp


def loss(w, x, y):
    return jnp.sum((x @ w - y) ** 2)


def main():
    w = jnp.arange(6.0).reshape(3, 2) / 10.0
    xs = jnp.arange(24.0).reshape(8, 3) / 10.0
    ys = jnp.arange(16.0).reshape(8, 2) / 10.0
    return jax.vmap(jax.grad(loss))(w, xs, ys)
