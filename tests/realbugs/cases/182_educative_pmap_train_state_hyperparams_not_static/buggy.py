import jax
import jax.numpy as jnp


@jax.pmap
def create_train_state(rng, learning_rate, momentum):
    w_key, b_key = jax.random.split(rng)
    params = {
        "w": jax.random.normal(w_key, (4, 3)) * 0.1,
        "b": jax.random.normal(b_key, (3,)) * 0.01,
    }
    if momentum:
        velocity = jax.tree.map(jnp.zeros_like, params)
    else:
        velocity = None
    return {"params": params, "velocity": velocity, "lr": jnp.float32(learning_rate)}


def main():
    n = jax.local_device_count()
    rngs = jax.random.split(jax.random.PRNGKey(0), n)
    return create_train_state(rngs, 0.1, 0.9)
