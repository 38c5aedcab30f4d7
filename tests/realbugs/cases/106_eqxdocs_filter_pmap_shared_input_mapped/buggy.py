import equinox as eqx
import jax
import jax.numpy as jnp


def make_member(key):
    return eqx.nn.MLP(2, 1, 4, 1, key=key)


def predict(member, x):
    return jax.vmap(member)(x)


def main():
    n = jax.local_device_count()
    members = eqx.filter_vmap(make_member)(jax.random.split(jax.random.PRNGKey(7), n))
    x = jnp.arange(6.0).reshape(3, 2) / 6.0
    return eqx.filter_pmap(predict)(members, x)
