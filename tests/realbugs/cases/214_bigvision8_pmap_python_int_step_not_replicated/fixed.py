import jax
import jax.numpy as jnp


def replicate(tree, n):
    return jax.tree.map(lambda x: jnp.broadcast_to(x, (n, *jnp.shape(x))), tree)


def learning_rate(step):
    warmup = 4.0
    return 0.1 * jnp.minimum(1.0, step / warmup)


def update_fn(params, images, labels, step):
    def loss_fn(p):
        logits = images @ p["w"] + p["b"][None, :]
        return jnp.mean((logits - labels) ** 2)

    loss, grads = jax.value_and_grad(loss_fn)(params)
    grads = jax.lax.pmean(grads, axis_name="batch")
    lr = learning_rate(step)
    params = jax.tree.map(lambda p, g: p - lr * g, params, grads)
    return params, jax.lax.pmean(loss, axis_name="batch")


def main():
    n = jax.local_device_count()
    params = {"w": jnp.linspace(-0.5, 0.5, 6).reshape(3, 2), "b": jnp.zeros(2)}
    params_repl = replicate(params, n)
    images = jnp.cos(jnp.arange(n * 4 * 3, dtype=jnp.float32)).reshape(n, 4, 3)
    labels = jnp.sin(jnp.arange(n * 4 * 2, dtype=jnp.float32)).reshape(n, 4, 2)
    p_update = jax.pmap(update_fn, axis_name="batch")
    losses = []
    for step in range(1, 3):
        params_repl, loss = p_update(params_repl, images, labels, replicate(step, n))
        losses.append(loss)
    return params_repl, jnp.stack(losses)
