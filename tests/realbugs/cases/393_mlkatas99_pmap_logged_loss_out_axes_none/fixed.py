import jax
import jax.numpy as jnp


def train_step(params, x, y):
    def loss_fn(p):
        return jnp.mean((x @ p - y) ** 2)

    loss, grads = jax.value_and_grad(loss_fn)(params)
    grads = jax.lax.pmean(grads, axis_name="devices")
    return params - 0.1 * grads, loss


def main():
    n = jax.local_device_count()
    params = jnp.array([0.5, -1.0, 2.0])
    x = jnp.arange(n * 12.0).reshape(n, 4, 3) / 10.0
    y = jnp.arange(n * 4.0).reshape(n, 4) / 7.0
    step = jax.pmap(train_step, axis_name="devices", in_axes=(None, 0, 0), out_axes=(None, 0))
    new_params, losses = step(params, x, y)
    # the logged training loss: the mean of the per-device losses, as on a single device
    return {"params": new_params, "loss": jnp.mean(losses)}
