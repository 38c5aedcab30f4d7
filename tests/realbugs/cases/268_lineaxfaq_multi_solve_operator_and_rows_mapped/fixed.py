import equinox as eqx
import jax.numpy as jnp


class MatrixOperator(eqx.Module):
    matrix: jnp.ndarray


def linear_solve(operator, vector):
    # solves one system A x = b
    return jnp.linalg.solve(operator.matrix, vector)


def main():
    operator = MatrixOperator(jnp.array([[4.0, 1.0, 0.0], [1.0, 3.0, 1.0], [0.0, 1.0, 2.0]]))
    # A X = B with two right-hand sides, stored as the columns of B
    b = jnp.array([[1.0, 0.0], [2.0, 1.0], [3.0, -1.0]])
    multi_linear_solve = eqx.filter_vmap(linear_solve, in_axes=(None, 1))
    return multi_linear_solve(operator, b)
