import jax
import jax.numpy as jnp


def matmul_sharded(x, w):
    # w: this device's (input_dim / n, output_dim) block of rows; partial products summed
    return jax.lax.psum(x @ w, "model")


def main():
    n, batch, k, out = 4, 2, 3, 5
    x = jnp.linspace(-1.0, 1.0, batch * n * k).reshape(batch, n, k)  # features in n blocks of k
    w = jnp.cos(jnp.arange(n * k * out, dtype=jnp.float32)).reshape(n, k, out)
    return jax.pmap(matmul_sharded, axis_name="model", in_axes=(1, 0))(x, w)
