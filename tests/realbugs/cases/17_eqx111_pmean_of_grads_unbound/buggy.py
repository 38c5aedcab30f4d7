import jax
import jax.numpy as jnp


def loss(params, x):
    return jnp.sum((x * params["w"] + params["b"]) ** 2)


def update(params, x):
    grads = jax.grad(loss)(params, x)
    grads = jax.lax.pmean(grads, "devices")
    return jax.tree.map(lambda p, g: p - 0.1 * g, params, grads)


def main():
    params = {"w": jnp.ones((4, 3)), "b": jnp.zeros((4, 3))}
    xs = jnp.arange(12.0).reshape(4, 3) / 10.0
    return jax.pmap(update)(params, xs)
