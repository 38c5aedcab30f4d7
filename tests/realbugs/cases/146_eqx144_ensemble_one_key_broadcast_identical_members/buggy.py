import equinox as eqx
import jax
import jax.numpy as jnp


def make_member(key):
    return eqx.nn.MLP(2, 1, 8, 1, key=key)


def predict(model, x):
    return model(x)


def main():
    key = jax.random.PRNGKey(0)
    ensemble = eqx.filter_vmap(make_member, in_axes=None, axis_size=4)(key)
    x = jnp.array([0.5, -1.0])
    return eqx.filter_vmap(predict, in_axes=(eqx.if_array(0), None))(ensemble, x)
