import functools

import equinox as eqx
import jax
import jax.numpy as jnp


def loss(model, batch):
    xs, ys = batch
    preds = jax.vmap(model)(xs)
    return jnp.mean((preds - ys) ** 2)


def replicate(tree, n=8):
    return jax.tree.map(lambda a: jnp.broadcast_to(a, (n, *a.shape)) if eqx.is_array(a) else a, tree)


def main():
    model = eqx.nn.Linear(4, 2, key=jax.random.PRNGKey(0))
    velocity = jax.tree.map(jnp.zeros_like, eqx.filter(model, eqx.is_array))
    model = replicate(model)
    velocity = replicate(velocity)

    @functools.partial(eqx.filter_pmap, in_axes=(None, None, 0), axis_name="device")
    def train_step(model, velocity, batch):
        value, grads = eqx.filter_value_and_grad(loss)(model, batch)
        grads = jax.lax.pmean(grads, axis_name="device")
        velocity = jax.tree.map(lambda v, g: 0.9 * v + g, velocity, grads)
        model = eqx.apply_updates(model, jax.tree.map(lambda v: -0.1 * v, velocity))
        return jax.lax.pmean(value, axis_name="device"), model, velocity

    xs = jnp.arange(8 * 3 * 4.0).reshape(8, 3, 4) / 50.0
    ys = jnp.ones((8, 3, 2))
    value, model, velocity = train_step(model, velocity, (xs, ys))
    return value, model.weight, model.bias
