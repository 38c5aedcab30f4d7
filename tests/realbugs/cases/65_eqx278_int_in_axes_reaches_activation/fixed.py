import equinox as eqx
import jax
import jax.numpy as jnp


def make_member(key):
    return eqx.nn.MLP(3, 2, 4, 1, key=key)


def predict(member, x):
    return member(x)


def main():
    keys = jax.random.split(jax.random.PRNGKey(0), 5)
    ensemble = eqx.filter_vmap(make_member)(keys)
    x = jnp.arange(3.0) / 4.0
    return eqx.filter_vmap(predict, in_axes=(eqx.if_array(0), None))(ensemble, x)
