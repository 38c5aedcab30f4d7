import jax
import jax.numpy as jnp


def pmean(fun, axis_name="b"):
    # averages every output of fun over the replicas
    def wrapper(*args):
        return jax.tree.map(lambda t: jax.lax.pmean(t, axis_name), fun(*args))

    return wrapper


def loss(w, x, y):
    return jnp.mean((x @ w - y) ** 2)


value_and_grad = pmean(jax.value_and_grad(loss))


def init_state(w, x, y):
    value, grad = value_and_grad(w, x, y)
    return {"value": value, "error": jnp.sqrt(jnp.sum(grad * grad))}


def update(w, state, x, y):
    value, grad = value_and_grad(w, x, y)
    w = w - 0.1 * grad
    return w, {"value": value, "error": jnp.sqrt(jnp.sum(grad * grad))}


def main():
    n = jax.device_count()
    x = jnp.sin(jnp.arange(n * 4 * 3, dtype=jnp.float32)).reshape(n, 4, 3)
    y = jnp.cos(jnp.arange(n * 4, dtype=jnp.float32)).reshape(n, 4)
    w = jnp.zeros(3)
    state = init_state(w, x, y)
    w, state = jax.tree.map(lambda a: jnp.broadcast_to(a, (n,) + a.shape), (w, state))
    step = jax.pmap(update, axis_name="b")
    for _ in range(3):
        w, state = step(w, state, x, y)
    return w, state
