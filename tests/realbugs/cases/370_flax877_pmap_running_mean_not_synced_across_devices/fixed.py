import jax
import jax.numpy as jnp

MOMENTUM = 0.9


def train_step(w, running_mean, x, y):
    # a linear model with a batch-norm-style running mean of its inputs
    def loss(w):
        return jnp.mean((x @ w - y) ** 2)

    grad = jax.lax.pmean(jax.grad(loss)(w), "batch")
    batch_mean = jax.lax.pmean(x.mean(axis=0), "batch")  # synced across devices
    return w - 0.1 * grad, MOMENTUM * running_mean + (1 - MOMENTUM) * batch_mean


def main():
    n = jax.local_device_count()
    w = jnp.zeros((n, 3))  # replicated parameters
    running_mean = jnp.zeros((n, 3))  # replicated running statistics
    xs = jnp.arange(n * 4 * 3, dtype=jnp.float32).reshape(n, 4, 3) / 20.0
    ys = jnp.sin(jnp.arange(n * 4, dtype=jnp.float32)).reshape(n, 4)
    step = jax.pmap(train_step, axis_name="batch")
    for _ in range(3):
        w, running_mean = step(w, running_mean, xs, ys)
    # the checkpoint / eval model takes the first device's copy (unreplicate)
    return w[0], running_mean[0]
