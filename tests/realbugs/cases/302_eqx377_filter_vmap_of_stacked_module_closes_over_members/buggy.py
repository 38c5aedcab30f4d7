import equinox as eqx
import jax
import jax.numpy as jnp


def make_encoder(key):
    return eqx.nn.Linear(4, 2, key=key)


def main():
    keys = jax.random.split(jax.random.PRNGKey(0), 3)
    encoders = eqx.filter_vmap(make_encoder)(keys)  # 3 encoders, stacked
    obs = jnp.linspace(-1.0, 1.0, 12).reshape(3, 4)  # one observation per encoder
    return eqx.filter_vmap(encoders)(obs)
