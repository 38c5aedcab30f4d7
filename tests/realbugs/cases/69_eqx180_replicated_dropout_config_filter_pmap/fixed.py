import equinox as eqx
import jax
import jax.numpy as jnp


class Net(eqx.Module):
    linear: eqx.nn.Linear
    dropout: eqx.nn.Dropout

    def __call__(self, x, key):
        return self.dropout(self.linear(x), key=key)


def step(net, x, key):
    return net(x, key)


def main():
    n_devices = 4
    net = Net(eqx.nn.Linear(3, 3, key=jax.random.PRNGKey(0)), eqx.nn.Dropout(0.5))
    arrays, static = eqx.partition(net, eqx.is_array)
    arrays = jax.tree.map(lambda leaf: jnp.stack([leaf] * n_devices), arrays)
    replicated = eqx.combine(arrays, static)
    x = jnp.arange(12.0).reshape(n_devices, 3)
    keys = jax.random.split(jax.random.PRNGKey(1), n_devices)
    return eqx.filter_pmap(step)(replicated, x, keys)
