import jax
import jax.numpy as jnp


def example_loss(w, x, y):
    return (jnp.sum(x * w) - y) ** 2


def main():
    w = jnp.array([0.5, -0.25, 1.0])
    xs = jnp.arange(9.0).reshape(3, 3) / 9.0
    ys = jnp.array([0.2, -0.1, 0.4])
    per_example_grads = jax.vmap(jax.grad(example_loss))
    return per_example_grads(w, xs, ys)
