import jax
import jax.numpy as jnp


def private_update(per_example_grads, noise_key):
    norms = jnp.linalg.norm(per_example_grads, axis=-1, keepdims=True)
    clipped = per_example_grads / jnp.maximum(norms, 1.0)
    noise = jax.random.normal(noise_key, clipped.shape[1:])
    return clipped.sum(0) + noise


def main():
    n = jax.local_device_count()
    grads = jnp.ones((n, 4, 3))
    step = jax.pmap(private_update, in_axes=(0, None))
    return step(grads, jax.random.key(7))
