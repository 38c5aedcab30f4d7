import equinox as eqx
import jax
import jax.numpy as jnp


def cell_step(cell, x, hidden):
    return cell(x, hidden)


def main():
    cell = eqx.nn.GRUCell(3, 4, key=jax.random.PRNGKey(0))
    xs = jnp.sin(jnp.arange(6 * 5 * 3, dtype=jnp.float32)).reshape(6, 5, 3)
    hidden = jnp.zeros((5, 4))
    step = eqx.filter_vmap(cell_step, in_axes=(None, 0, None))
    for t in range(xs.shape[0]):
        hidden = step(cell, xs[t], hidden)
    return hidden
