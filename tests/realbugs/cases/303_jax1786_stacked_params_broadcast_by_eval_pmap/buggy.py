import jax
import jax.numpy as jnp
import numpy as np

LEARNING_RATE = 0.05


def loss_fn(kernel, xs, ys):
    return jnp.mean((xs @ kernel - ys) ** 2)


def update(kernel, xs, ys):
    grads = jax.grad(loss_fn)(kernel, xs, ys)
    grads = jax.lax.pmean(grads, axis_name="batch")
    return kernel - LEARNING_RATE * grads


def predict(kernel, xs):
    return xs @ kernel


def main():
    n = jax.local_device_count()
    t = np.linspace(-1.0, 1.0, n * 4, dtype=np.float32)
    # Design matrix [t, 1] split one block of 4 rows per device; targets y = 2 t - 1.
    xs = np.stack([t, np.ones_like(t)], axis=-1).reshape(n, 4, 2)
    ys = (2.0 * t - 1.0).reshape(n, 4, 1)
    kernel = np.array([[0.5], [0.0]], dtype=np.float32)
    replicated = np.stack([kernel] * n)
    for _ in range(3):
        replicated = jax.pmap(update, axis_name="batch")(replicated, xs, ys)
    # The trained kernel comes back to the host (say, for a checkpoint): still one copy per device.
    saved = jax.device_get(replicated)
    return jax.pmap(predict, in_axes=(None, 0))(saved, xs)
