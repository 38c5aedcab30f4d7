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
    model = eqx.nn.Linear(3, 2, key=jax.random.PRNGKey(0))
    replicated = jax.tree.map(lambda a: jnp.broadcast_to(a, (n_devices, *a.shape)), model)
    x = jax.random.normal(jax.random.PRNGKey(1), (n_devices, 4, 3))  # (devices, per-device batch, features)
    s = jnp.sum(x, axis=-1, keepdims=True)
    y = jnp.concatenate([s, -s], axis=-1)  # (devices, per-device batch, 2)
    step_parallel = eqx.filter_pmap(step)
    loss, model = step_parallel(replicated, x, y)
    return loss, model.weight
