import jax
import jax.numpy as jnp


def simulate_path(key, y0):
    dws = jnp.sqrt(0.1) * jax.random.normal(key, (10, 2))

    def step(y, dw):
        y = y - 0.1 * y + dw
        return y, y

    _, ys = jax.lax.scan(step, y0, dws)
    return ys


def main():
    y0s = jnp.ones((4, 2)) * jnp.arange(1.0, 5.0)[:, None]
    keys = jax.random.split(jax.random.key(100), y0s.shape[0])
    return jax.vmap(simulate_path)(keys, y0s)
