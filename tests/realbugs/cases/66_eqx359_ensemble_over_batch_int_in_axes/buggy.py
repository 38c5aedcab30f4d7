import equinox as eqx
import jax
import jax.numpy as jnp


def build(key):
    return eqx.nn.MLP(2, 3, 5, 2, key=key)


def run_member(model, xs):
    return jax.vmap(model)(xs)


def main():
    models = eqx.filter_vmap(build)(jax.random.split(jax.random.PRNGKey(7), 4))
    batch = jnp.arange(12.0).reshape(6, 2) / 6.0
    evaluate = eqx.filter_vmap(run_member, in_axes=(0, None))
    return evaluate(models, batch)
