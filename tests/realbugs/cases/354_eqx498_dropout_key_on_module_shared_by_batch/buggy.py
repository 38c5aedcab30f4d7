import equinox as eqx
import jax
import jax.numpy as jnp


class NoisyHead(eqx.Module):
    linear: eqx.nn.Linear
    dropout: eqx.nn.Dropout
    key: jax.Array

    def __init__(self, key):
        wkey, self.key = jax.random.split(key)
        self.linear = eqx.nn.Linear(4, 4, key=wkey)
        self.dropout = eqx.nn.Dropout(0.5)

    def __call__(self, x):
        # the dropout key is read from the module itself
        return self.dropout(self.linear(x), key=self.key)


def forward(model, x):
    return model(x)


def main():
    model = NoisyHead(jax.random.PRNGKey(0))
    xs = jnp.ones((6, 4))
    return eqx.filter_vmap(forward, in_axes=(None, 0))(model, xs)
