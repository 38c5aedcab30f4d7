import jax
import jax.numpy as jnp


def eval_step(w, x, y):
    preds = x @ w
    loss = jax.lax.pmean(jnp.mean((preds - y) ** 2), "devices")
    return loss, preds


def main():
    w = jnp.arange(3.0) / 10.0
    x = jnp.arange(48.0).reshape(4, 4, 3) / 10.0
    y = jnp.arange(16.0).reshape(4, 4) / 10.0
    f = jax.pmap(eval_step, axis_name="devices", in_axes=(None, 0, 0), out_axes=(None, 0))
    return f(w, x, y)
