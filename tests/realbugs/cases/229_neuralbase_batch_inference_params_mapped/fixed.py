import jax
import jax.numpy as jnp


def single_example_forward(x, params):
    hidden = jax.nn.relu(x @ params["w1"] + params["b1"])
    return hidden @ params["w2"] + params["b2"]


def init_params(key):
    k1, k2 = jax.random.split(key)
    return {
        "w1": jax.random.normal(k1, (4, 6)) * 0.5,
        "b1": jnp.zeros(6),
        "w2": jax.random.normal(k2, (6, 3)) * 0.5,
        "b2": jnp.zeros(3),
    }


def main():
    params = init_params(jax.random.key(0))
    batch = jnp.linspace(-1.0, 1.0, 20).reshape(5, 4)
    return jax.vmap(single_example_forward, in_axes=(0, None))(batch, params)
