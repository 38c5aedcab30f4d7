import equinox as eqx
import jax
import jax.numpy as jnp


def predict(model, x):
    return jnp.tanh(model(x))


def main():
    model = eqx.nn.Linear(3, 4, key=jax.random.PRNGKey(0))
    x = jnp.linspace(-1.0, 1.0, 12).reshape(4, 3)  # one example per device
    return eqx.filter_pmap(predict)(model, x)
