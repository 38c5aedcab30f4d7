import jax
import jax.numpy as jnp


def loss(w, x, y):
    return jnp.mean((x @ w - y) ** 2)


def train_step(w, x, y):
    grads = jax.lax.pmean(jax.grad(loss)(w, x, y), "devices")
    return w - 0.1 * grads


def predict(w, x):
    return x @ w


def main():
    n = 4
    w = jnp.linspace(-1.0, 1.0, 3)
    x = jnp.sin(jnp.arange(n * 8 * 3, dtype=jnp.float32)).reshape(n, 8, 3)
    y = jnp.cos(jnp.arange(n * 8, dtype=jnp.float32)).reshape(n, 8)
    # the training pmap returns one copy of the updated weights per device: shape (4, 3)
    w_dev = jax.pmap(train_step, axis_name="devices", in_axes=(None, 0, 0))(w, x, y)
    evaluate = jax.pmap(predict, in_axes=(0, 0))
    return evaluate(w_dev, x)
