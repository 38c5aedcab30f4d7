import jax.numpy as jnp
from jax import vmap


def predict(params, input_vec):
    for w, b in params:
        output_vec = jnp.dot(w, input_vec) + b
        input_vec = jnp.tanh(output_vec)
    return output_vec


def main():
    params = [
        (jnp.arange(12.0).reshape(4, 3) / 12.0, jnp.arange(4.0) / 4.0),
        (jnp.arange(8.0).reshape(2, 4) / 8.0, jnp.arange(2.0) / 2.0),
    ]
    input_batch = jnp.arange(15.0).reshape(5, 3) / 15.0
    vectorized_predict = vmap(predict, in_axes=(None, 0))
    return vectorized_predict(params, input_batch)
