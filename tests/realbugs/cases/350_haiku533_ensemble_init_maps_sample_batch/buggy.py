import jax
import jax.numpy as jnp


def init(key, x):
    return {"w": jax.random.normal(key, (x.shape[-1], 3))}


def apply(params, x):
    return x @ params["w"]


def main():
    n_models = 4
    keys = jax.random.split(jax.random.PRNGKey(0), n_models)
    x = jnp.linspace(-1.0, 1.0, 10).reshape(5, 2)  # one batch of inputs, shared by every model
    params = jax.vmap(init)(keys, x)
    return jax.vmap(apply, in_axes=(0, None))(params, x)  # (models, batch, 3)
