import jax
import jax.numpy as jnp


def standardize(column):
    return (column - jnp.mean(column)) / jnp.std(column)


def main():
    # each column is one feature observed over four samples
    features = jnp.array([[1.0, 10.0, 0.5], [2.0, 30.0, 0.1], [3.0, 20.0, 0.4], [6.0, 40.0, 0.2]])
    return jax.vmap(standardize, in_axes=1, out_axes=1)(features)
