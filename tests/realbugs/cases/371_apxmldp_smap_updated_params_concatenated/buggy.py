import jax
import jax.numpy as jnp
from jax.sharding import AxisType


def linear_model(params, x):
    w, b = params
    return x @ w + b


def train_step(params, x, y):
    # each instance: gradients on its slice of the batch, averaged across devices
    grads = jax.grad(lambda p: jnp.mean((linear_model(p, x) - y) ** 2))(params)
    grads = jax.lax.pmean(grads, axis_name="batch")
    return jax.tree.map(lambda p, g: p - 0.1 * g, params, grads)


def main():
    mesh = jax.make_mesh((8,), ("batch",), axis_types=(AxisType.Auto,))
    params = (jnp.linspace(-0.5, 0.5, 3), jnp.array([0.2]))
    x = jnp.sin(jnp.arange(32 * 3, dtype=jnp.float32)).reshape(32, 3)
    y = x @ jnp.array([1.0, -2.0, 0.5]) + 0.3
    with jax.set_mesh(mesh):
        step = jax.smap(train_step, in_axes=(None, 0, 0), out_axes=0, axis_name="batch")
        w, b = step(params, x, y)
    return w, b
