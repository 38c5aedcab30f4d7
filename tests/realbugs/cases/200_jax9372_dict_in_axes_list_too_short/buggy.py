import jax
import jax.numpy as jnp
from jax import random


def mlp(params, x):
    (w1, b1), (w2, b2) = params["layers"]
    return jnp.tanh(x @ w1 + b1) @ w2 / params["temperature"] + b2


def main():
    k1, k2 = random.split(random.key(1))
    params = {
        "layers": [
            (random.normal(k1, (3, 2, 4)), jnp.zeros((3, 4))),
            (random.normal(k2, (3, 4, 1)), jnp.zeros((3, 1))),
        ],
        "temperature": 2.0,
    }
    x = jnp.array([0.3, -0.7])
    ensemble = jax.vmap(mlp, in_axes=({"layers": [(0, 0)], "temperature": None}, None))
    return ensemble(params, x)
