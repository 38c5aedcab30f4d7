import jax
import jax.numpy as jnp


def train_step(w, batch):
    x, y = batch[:, :3], batch[:, 3]

    def loss_fn(w):
        return jnp.mean((x @ w - y) ** 2)

    loss, grad = jax.value_and_grad(loss_fn)(w)
    grad = jax.lax.pmean(grad, "batch")
    return w - 0.1 * grad, jax.lax.pmean(loss, "batch")


def main():
    n = jax.local_device_count()
    step = jax.pmap(train_step, axis_name="batch", in_axes=(None, 0), out_axes=(None, 0))
    w = jnp.zeros(3)
    data = jnp.arange(n * 4 * 4, dtype=jnp.float32).reshape(n, 4, 4) / 100.0
    losses = []
    for _ in range(3):
        w, loss = step(w, data)
        losses.append(loss)
    return w, jnp.stack(losses)
