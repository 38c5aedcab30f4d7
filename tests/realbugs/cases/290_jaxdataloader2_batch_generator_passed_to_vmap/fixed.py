import jax
import jax.numpy as jnp


def batches(xs, ys, batch_size):
    for start in range(0, xs.shape[0], batch_size):
        yield xs[start : start + batch_size], ys[start : start + batch_size]


def squared_error(w, example):
    x, y = example
    return (jnp.dot(w, x) - y) ** 2


def main():
    xs = jnp.arange(24.0).reshape(8, 3) / 24.0
    ys = jnp.arange(8.0) / 8.0
    w = jnp.array([0.5, -1.0, 2.0])
    loader = batches(xs, ys, batch_size=4)
    per_example = jax.vmap(squared_error, in_axes=(None, 0))
    return jnp.concatenate([per_example(w, batch) for batch in loader])
