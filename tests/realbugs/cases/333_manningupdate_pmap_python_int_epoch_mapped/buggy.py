import jax
import jax.numpy as jnp

INIT_LR = 1.0
DECAY_RATE = 0.95
DECAY_STEPS = 5


def loss(w, x, y):
    return jnp.mean((x @ w - y) ** 2)


def update(w, x, y, epoch):
    grads = jax.lax.psum(jax.grad(loss)(w, x, y), "devices")
    lr = INIT_LR * DECAY_RATE ** (epoch / DECAY_STEPS)
    return w - lr * grads


def main():
    n = 4
    w = jnp.linspace(-1.0, 1.0, 3)
    x = jnp.sin(jnp.arange(n * 8 * 3, dtype=jnp.float32)).reshape(n, 8, 3)
    y = jnp.cos(jnp.arange(n * 8, dtype=jnp.float32)).reshape(n, 8)
    step = jax.pmap(update, axis_name="devices", in_axes=(None, 0, 0, 0))
    return step(w, x, y, 3)
