import equinox as eqx
import jax
import jax.numpy as jnp


def predict(model, x):
    return model(x)


def main():
    model = eqx.nn.Linear(3, 3, key=jax.random.PRNGKey(0))
    xs = jnp.arange(9.0).reshape(3, 3) / 4.0
    # one prediction per example of the batch, all from the same layer
    return eqx.filter_vmap(predict, in_axes=(None, 0))(model, xs)
