import equinox as eqx
import jax
import jax.numpy as jnp


def forward(model, x):
    return model(x)


def main():
    keys = jax.random.split(jax.random.PRNGKey(3), 3)
    members = [eqx.nn.MLP(2, 2, 4, 1, key=k) for k in keys]
    arrays = [eqx.filter(m, eqx.is_array) for m in members]
    static = eqx.filter(members[0], eqx.is_array, inverse=True)
    stacked = eqx.combine(jax.tree.map(lambda *leaves: jnp.stack(leaves), *arrays), static)
    xs = jnp.arange(6.0).reshape(3, 2) / 3.0
    return eqx.filter_vmap(forward)(stacked, xs)
