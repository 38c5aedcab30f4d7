import jax
import jax.numpy as jnp


def replicate(tree):
    n = jax.local_device_count()
    return jax.tree.map(lambda a: jnp.broadcast_to(a, (n,) + a.shape), tree)


def train_step(state, x, y):
    def loss_fn(params):
        pred = jnp.einsum("bi,io->bo", x, params["w"]) + params["b"][None]
        return jnp.mean((pred - y) ** 2)

    grads = jax.lax.pmean(jax.grad(loss_fn)(state["params"]), "batch")
    params = jax.tree.map(lambda p, g: p - 0.1 * g, state["params"], grads)
    return {"params": params, "step": state["step"] + 1}


def main():
    n = jax.local_device_count()
    params = {"w": jnp.zeros((3, 2)), "b": jnp.zeros(2)}
    state = {"params": params, "step": jnp.array(0)}
    state = replicate(state)
    x = jnp.sin(jnp.arange(n * 4 * 3, dtype=jnp.float32)).reshape(n, 4, 3)
    y = jnp.cos(jnp.arange(n * 4 * 2, dtype=jnp.float32)).reshape(n, 4, 2)
    p_train_step = jax.pmap(train_step, "batch")
    for _ in range(2):
        state = p_train_step(state, x, y)
    return state
