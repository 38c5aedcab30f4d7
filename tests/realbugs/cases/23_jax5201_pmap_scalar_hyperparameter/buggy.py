import jax
import jax.numpy as jnp


def sgd(params, grads, lr):
    return params - lr * grads


def main():
    params = jnp.ones((4, 3))
    grads = jnp.arange(12.0).reshape(4, 3)
    return jax.pmap(sgd)(params, grads, 0.1)
