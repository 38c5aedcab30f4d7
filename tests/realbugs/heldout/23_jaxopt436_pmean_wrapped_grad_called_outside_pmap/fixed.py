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
    w = jnp.broadcast_to(jnp.zeros(3), (n, 3))
    state = jax.pmap(init_state, axis_name="b")(w, x, y)
    step = jax.pmap(update, axis_name="b")
    for _ in range(3):
        w, state = step(w, state, x, y)
    return w, state
