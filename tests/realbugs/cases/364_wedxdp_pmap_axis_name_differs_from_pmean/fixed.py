from functools import partial

import jax
import jax.numpy as jnp


def loss_fn(params, data, labels):
    pred = data @ params["w"] + params["b"]
    return jnp.mean((pred - labels) ** 2)


@partial(jax.pmap, axis_name="num_devices")
def train_step(params, data, labels):
    grads = jax.grad(loss_fn)(params, data, labels)
    grads = jax.lax.pmean(grads, axis_name="num_devices")  # mean of the gradients across devices
    return jax.tree.map(lambda p, g: p - 0.1 * g, params, grads)


def main():
    n = jax.device_count()
    params = {"w": jnp.linspace(-0.5, 0.5, 3), "b": jnp.array(0.1)}
    replicated_params = jax.tree.map(lambda p: jnp.stack([p] * n), params)
    data = jnp.sin(jnp.arange(n * 4 * 3, dtype=jnp.float32)).reshape(n, 4, 3)
    labels = jnp.cos(jnp.arange(n * 4, dtype=jnp.float32)).reshape(n, 4)
    return train_step(replicated_params, data, labels)
