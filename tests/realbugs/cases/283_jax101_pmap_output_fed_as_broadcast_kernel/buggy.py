import jax
import jax.numpy as jnp
import numpy as np


def convolve(x, w):
    output = []
    for i in range(1, len(x) - 1):
        output.append(jnp.dot(x[i - 1 : i + 2], w))
    return jnp.array(output)


def main():
    n = jax.local_device_count()
    xs = np.arange(5 * n, dtype=np.float32).reshape(-1, 5)
    w = np.array([2.0, 3.0, 4.0], dtype=np.float32)
    # First pass: one row of xs per device, the single kernel w broadcast to every device.
    first = jax.pmap(convolve, in_axes=(0, None))(xs, w)
    # Second pass: each device's 3 outputs of the first pass are that device's kernel.
    return jax.pmap(convolve, in_axes=(0, None))(xs, first)
