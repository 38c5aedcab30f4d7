import jax
import jax.numpy as jnp


def replicate(tree, n):
    # what jax.device_put_replicated / flax.jax_utils.replicate return: a leading device axis
    return jax.tree.map(lambda a: jnp.broadcast_to(a, (n,) + a.shape), tree)


def predict(params, x):
    return jnp.tanh(x @ params["w"] + params["b"][None, :])


def main():
    n = jax.local_device_count()
    params = {
        "w": jnp.linspace(-1.0, 1.0, 12).reshape(4, 3),
        "b": jnp.array([0.1, 0.0, -0.1]),
    }
    replicated = replicate(params, n)
    batch = jnp.cos(jnp.arange(n * 2 * 4, dtype=jnp.float32)).reshape(n, 2, 4)
    return jax.pmap(predict, in_axes=(None, 0))(replicated, batch)
