import jax
import jax.numpy as jnp
from jax.sharding import AxisType


def normalize_over_time(x):
    # x: (channels, time, batch block); standardize each channel over time.
    mean = jnp.mean(x, axis=1, keepdims=True)
    std = jnp.std(x, axis=1, keepdims=True)
    return (x - mean) / (std + 1e-6)


def main():
    mesh = jax.make_mesh((4,), ("batch",), axis_types=(AxisType.Auto,))
    # Recordings stored batch-last: (channels, time, batch).
    signals = jnp.sin(jnp.arange(3 * 5 * 8, dtype=jnp.float32) * 0.13).reshape(3, 5, 8)
    with jax.set_mesh(mesh):
        f = jax.smap(normalize_over_time, in_axes=-1, out_axes=-1, axis_name="batch")
        return f(signals)
