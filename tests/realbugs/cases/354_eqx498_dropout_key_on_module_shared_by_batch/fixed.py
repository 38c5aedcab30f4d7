import equinox as eqx
import jax
import jax.numpy as jnp


class NoisyHead(eqx.Module):
    linear: eqx.nn.Linear
    dropout: eqx.nn.Dropout

    def __init__(self, key):
        self.linear = eqx.nn.Linear(4, 4, key=key)
        self.dropout = eqx.nn.Dropout(0.5)

    def __call__(self, x, key):
        return self.dropout(self.linear(x), key=key)


def forward(model, x, key):
    return model(x, key)


def main():
    wkey, dkey = jax.random.split(jax.random.PRNGKey(0))
    model = NoisyHead(wkey)
    xs = jnp.ones((6, 4))
    keys = jax.random.split(dkey, 6)
    return eqx.filter_vmap(forward, in_axes=(None, 0, 0))(model, xs, keys)
