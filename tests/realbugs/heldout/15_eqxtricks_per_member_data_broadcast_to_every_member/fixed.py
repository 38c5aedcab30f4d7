import equinox as eqx
import jax
import jax.numpy as jnp


@eqx.filter_vmap
def make_ensemble(key):
    return eqx.nn.Linear(3, 2, use_bias=False, key=key)


def evaluate_per_member(model, x):
    return model(x)


def main():
    ensemble = make_ensemble(jax.random.split(jax.random.PRNGKey(0), 3))
    # each of the 3 members gets its own 3-feature input (row i for member i)
    xs = jnp.arange(9.0).reshape(3, 3) / 5.0
    return eqx.filter_vmap(evaluate_per_member, in_axes=(eqx.if_array(0), 0))(ensemble, xs)
