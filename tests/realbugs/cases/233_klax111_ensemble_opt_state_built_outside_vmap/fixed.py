import equinox as eqx
import jax
import jax.numpy as jnp
import optax


def loss_fn(model, x, y):
    return jnp.mean((jax.vmap(model)(x) - y) ** 2)


def make_step(model, opt_state, x, y):
    grads = eqx.filter_grad(loss_fn)(model, x, y)
    updates, opt_state = optimizer.update(grads, opt_state)
    return eqx.apply_updates(model, updates), opt_state


optimizer = optax.adam(1e-2)


def main():
    keys = jax.random.split(jax.random.PRNGKey(0), 3)
    ensemble = eqx.filter_vmap(lambda k: eqx.nn.MLP(2, 1, 4, 1, key=k))(keys)
    opt_state = eqx.filter_vmap(optimizer.init)(eqx.filter(ensemble, eqx.is_array))
    x = jnp.linspace(-1.0, 1.0, 10).reshape(5, 2)
    y = jnp.sum(x, axis=1, keepdims=True)
    step = eqx.filter_vmap(make_step, in_axes=(eqx.if_array(0), eqx.if_array(0), None, None))
    for _ in range(2):
        ensemble, opt_state = step(ensemble, opt_state, x, y)
    return ensemble.layers[-1].weight, opt_state[0].count
