import equinox as eqx
import jax
import jax.numpy as jnp


def loss_fn(model, x, y):
    pred = jax.vmap(model)(x)
    return jnp.mean((pred - y) ** 2)


def step(model, x, y):
    loss, grads = eqx.filter_value_and_grad(loss_fn)(model, x, y)
    grads = jax.lax.pmean(grads, axis_name="devices")
    model = eqx.apply_updates(model, jax.tree.map(lambda g: -0.1 * g, grads))
    return jax.lax.pmean(loss, axis_name="devices"), model


def main():
    n_devices = jax.device_count()
    model = eqx.nn.Linear(3, 2, key=jax.random.PRNGKey(0))  # one copy, broadcast to every device
    x = jax.random.normal(jax.random.PRNGKey(1), (n_devices, 4, 3))
    s = jnp.sum(x, axis=-1, keepdims=True)
    y = jnp.concatenate([s, -s], axis=-1)  # (devices, per-device batch, 2)
    step_parallel = eqx.filter_pmap(step, in_axes=(None, 0, 0), axis_name="devices")
    losses = []
    for _ in range(2):
        loss, model = step_parallel(model, x, y)
        losses.append(loss)
    return jnp.stack(losses), model.weight
