import jax
import jax.numpy as jnp


def predict(params, input_vec):
    activations = input_vec
    for w, b in params:
        outputs = jnp.dot(w, activations) + b
        activations = jnp.tanh(outputs)
    return outputs


def main():
    dims = [2, 3, 5]
    keys = jax.random.split(jax.random.PRNGKey(0), 2)
    params = [
        (jax.random.normal(k, (d_out, d_in)), jnp.linspace(0.0, 1.0, d_out))
        for k, d_in, d_out in zip(keys, dims, dims[1:])
    ]
    input_batch = jnp.linspace(-1.0, 1.0, 8).reshape(4, 2)  # 4 inputs of size 2
    return jax.vmap(predict, in_axes=(None, 0))(params, input_batch)
