import jax
import jax.numpy as jnp


def affine(x, params):
    return params["a"] * x + params["b"]


def main():
    xs = jnp.arange(3.0) + 1.0
    batch_of_params = [dict(a=1.5, b=-2.0), dict(a=0.5, b=3.0), dict(a=-1.0, b=0.25)]
    params = jax.tree.map(lambda *leaves: jnp.stack(leaves), *batch_of_params)
    return jax.vmap(affine, in_axes=(0, 0))(xs, params)
