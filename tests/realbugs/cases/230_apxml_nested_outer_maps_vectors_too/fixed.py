import jax
import jax.numpy as jnp


def matvec(matrix, vector):
    return jnp.dot(matrix, vector)


def main():
    matrices = jnp.arange(18.0).reshape(3, 2, 3)
    vectors = jnp.cos(jnp.arange(9.0)).reshape(3, 3)
    # every matrix with every vector: result[i, j] = matrices[i] @ vectors[j]
    per_matrix = jax.vmap(matvec, in_axes=(None, 0))
    return jax.vmap(per_matrix, in_axes=(0, None))(matrices, vectors)
