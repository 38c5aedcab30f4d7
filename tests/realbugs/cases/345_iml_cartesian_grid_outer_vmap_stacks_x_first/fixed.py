import jax
import jax.numpy as jnp


def f(x, y):
    return jnp.sin(x) * jnp.cos(y)


def main():
    x = jnp.linspace(-2.0, 2.0, 5)
    y = jnp.linspace(-1.0, 1.0, 4)
    grid_x, grid_y = jnp.meshgrid(x, y)  # (4, 5): rows follow y, columns follow x
    z = jax.vmap(jax.vmap(f, in_axes=(None, 0)), in_axes=(0, None), out_axes=1)(x, y)
    # contour(grid_x, grid_y, z) needs z laid out like the meshgrid: (len(y), len(x))
    return grid_x, grid_y, z
