import equinox as eqx
import jax
import jax.numpy as jnp


def member_output(model, x):
    return model(x)


def main():
    keys = jax.random.split(jax.random.PRNGKey(0), 4)
    members = [eqx.nn.MLP(2, 2, 8, 2, key=k) for k in keys]
    x = jnp.array([0.5, -1.0])
    # every member on the same input: one output per member, shape (4, 2)
    return eqx.filter_vmap(member_output, in_axes=(eqx.if_array(0), None))(members, x)
