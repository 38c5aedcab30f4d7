import jax
import jax.numpy as jnp


def model_fn(params, x):
    return x @ params["w"] + params["b"]


def main():
    samples = {
        "w": jnp.linspace(-1.0, 1.0, 12).reshape(4, 3),
        "b": jnp.array([0.0, 0.1, -0.1, 0.2]),
    }
    x = jnp.arange(6.0).reshape(2, 3) / 6.0
    predictions = jax.vmap(model_fn, in_axis=(0, None))(samples, x)
    return jnp.diag(jnp.std(predictions, axis=0) ** 2)
