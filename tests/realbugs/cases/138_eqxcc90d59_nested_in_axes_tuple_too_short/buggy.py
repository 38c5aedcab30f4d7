import jax
import jax.numpy as jnp


def run(arg):
    init_val1, init_val2, weight = arg
    return jnp.sum(jnp.tanh(init_val1 @ weight)) + jnp.sum(jnp.tanh(init_val2 @ weight))


def main():
    init_val1 = jnp.arange(12.0).reshape(4, 3) / 12.0
    init_val2 = jnp.arange(12.0, 24.0).reshape(4, 3) / 24.0
    weight = jnp.eye(3) + 0.1
    true_run = jax.vmap(jax.value_and_grad(run), in_axes=((0, None),))
    return true_run((init_val1, init_val2, weight))
