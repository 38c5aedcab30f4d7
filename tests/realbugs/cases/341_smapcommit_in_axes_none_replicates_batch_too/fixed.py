import jax
import jax.numpy as jnp
from jax.sharding import AxisType


def forward(w, x):
    return jnp.tanh(x @ w)


def main():
    mesh = jax.make_mesh((8,), ("x",), axis_types=(AxisType.Auto,))
    w = jnp.linspace(-1.0, 1.0, 3 * 2).reshape(3, 2)
    x = jnp.sin(jnp.arange(16 * 3, dtype=jnp.float32)).reshape(16, 3)
    with jax.set_mesh(mesh):
        # meant: weights replicated, batch split over 'x'
        return jax.smap(forward, in_axes=(None, 0), out_axes=0, axis_name="x")(w, x)
