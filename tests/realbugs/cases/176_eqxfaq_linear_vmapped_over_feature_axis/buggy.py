import equinox as eqx
import jax
import jax.numpy as jnp


class SensorHead(eqx.Module):
    linear: eqx.nn.Linear

    def __init__(self, key):
        self.linear = eqx.nn.Linear(3, 2, key=key)

    def __call__(self, x):
        return jax.nn.softplus(self.linear(x))


def load_features():
    # 3 sensor channels, one row per channel, 5 samples each (as exported column-wise)
    return jnp.arange(15.0).reshape(3, 5) / 10.0


def main():
    model = SensorHead(jax.random.PRNGKey(0))
    x = load_features()
    y = jax.vmap(model)(x)
    return y
