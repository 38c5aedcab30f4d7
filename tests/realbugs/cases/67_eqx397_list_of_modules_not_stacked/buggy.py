import equinox as eqx
import jax
import jax.numpy as jnp


def forward(model, x):
    return model(x)


def main():
    keys = jax.random.split(jax.random.PRNGKey(3), 3)
    members = [eqx.nn.MLP(2, 2, 4, 1, key=k) for k in keys]
    xs = jnp.arange(6.0).reshape(3, 2) / 3.0
    return eqx.filter_vmap(forward)(members, xs)
