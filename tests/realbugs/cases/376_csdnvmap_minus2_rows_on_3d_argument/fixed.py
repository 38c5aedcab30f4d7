import jax
import jax.numpy as jnp


def project(row, block):
    # one row of a against its own (3, 2) block of b
    return row @ block


def main():
    a = jnp.arange(9.0).reshape(3, 3)  # 3 rows
    b = jnp.arange(18.0).reshape(3, 3, 2) / 10.0  # 3 blocks of shape (3, 2)
    # "-2 is the row axis" holds for the 2-D a, not for the 3-D b
    return jax.vmap(project, in_axes=(0, 0))(a, b)
