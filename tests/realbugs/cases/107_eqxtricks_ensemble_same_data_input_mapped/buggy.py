import equinox as eqx
import jax


def make_ensemble(key):
    return eqx.nn.MLP(2, 2, 3, 1, key=key)


def evaluate_ensemble(model, x):
    return model(x)


def main():
    keys = jax.random.split(jax.random.PRNGKey(0), 2)
    ensemble = eqx.filter_vmap(make_ensemble)(keys)
    x = jax.random.normal(jax.random.PRNGKey(1), (2,))
    return eqx.filter_vmap(evaluate_ensemble)(ensemble, x)
