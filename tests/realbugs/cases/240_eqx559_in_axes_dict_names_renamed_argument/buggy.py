import equinox as eqx
import jax
import jax.numpy as jnp


@eqx.filter_vmap(in_axes={"model": eqx.if_array(0), "x": None})
@eqx.filter_vmap(in_axes=(None, 0))
def evaluate_ensemble(member, x):
    return member(x)


def main():
    keys = jax.random.split(jax.random.PRNGKey(42), 2)
    ensemble = eqx.filter_vmap(lambda k: eqx.nn.MLP(2, 1, 8, 1, key=k))(keys)
    x = jnp.linspace(-2.0, 2.0, 10).reshape(5, 2)
    return evaluate_ensemble(ensemble, x)
