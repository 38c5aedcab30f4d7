import jax
import jax.numpy as jnp


def hidden_layer(h):
    # one step of a tanh layer over hidden_size = 4 features: (..., 4) -> (..., 4)
    w = jnp.linspace(-0.5, 0.5, 16).reshape(4, 4)
    return jnp.tanh(h @ w + 0.1)


def main():
    # (batch, seq_len, hidden_size) = (2, 5, 4): apply the layer at every sequence position
    x = jnp.arange(40.0).reshape(2, 5, 4) / 40.0
    return jax.vmap(hidden_layer, in_axes=-1, out_axes=-2)(x)
