import equinox as eqx
import jax
import jax.numpy as jnp


class Affine(eqx.Module):
    scale: jax.Array
    shift: jax.Array

    def __init__(self, key):
        self.scale = 1.0 + 0.1 * jax.random.normal(key, (4,))
        self.shift = jnp.zeros(4)

    def __call__(self, x):
        return jnp.tanh(self.scale * x + self.shift)


def loss(model, xs, ys):
    return jnp.mean((jax.vmap(model)(xs) - ys) ** 2)


def sgd_step(model, learning_rate, batch):
    xs, ys = batch
    grads = eqx.filter_grad(loss)(model, xs, ys)
    return eqx.apply_updates(model, jax.tree.map(lambda g: -learning_rate * g, grads))


def main():
    keys = jax.random.split(jax.random.PRNGKey(0), 4)
    ensemble = eqx.filter_vmap(Affine)(keys)
    learning_rates = jnp.array([0.3, 0.1, 0.03, 0.01])
    xs = jnp.arange(6 * 4.0).reshape(6, 4) / 20.0
    ys = jnp.ones((6, 4)) / 2.0
    step = eqx.filter_vmap(sgd_step, in_axes=(eqx.if_array(0), None, None))
    ensemble = step(ensemble, learning_rates, (xs, ys))
    return ensemble.scale, ensemble.shift
