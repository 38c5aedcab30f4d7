import jax
import jax.numpy as jnp


def smooth(signal, kernel):
    taps = kernel.shape[0]
    return jnp.stack([jnp.dot(signal[i : i + taps], kernel[::-1]) for i in range(signal.shape[0] - taps + 1)])


def main():
    signals = jnp.arange(10.0).reshape(2, 5)
    kernel = jnp.array([1.0, 2.0, 0.5])
    return jax.vmap(smooth, in_axes=[0, None])(signals, kernel)
