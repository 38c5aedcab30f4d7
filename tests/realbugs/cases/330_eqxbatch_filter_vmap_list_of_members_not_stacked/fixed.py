import equinox as eqx
import jax
import jax.numpy as jnp


def member_output(model, x):
    return model(x)


def stack_members(members):
    arrays = [eqx.filter(m, eqx.is_array) for m in members]
    stacked = jax.tree.map(lambda *leaves: jnp.stack(leaves), *arrays)
    return eqx.combine(stacked, eqx.filter(members[0], eqx.is_array, inverse=True))


def main():
    keys = jax.random.split(jax.random.PRNGKey(0), 4)
    members = [eqx.nn.MLP(2, 2, 8, 2, key=k) for k in keys]
    x = jnp.array([0.5, -1.0])
    # every member on the same input: one output per member, shape (4, 2)
    ensemble = stack_members(members)
    return eqx.filter_vmap(member_output, in_axes=(eqx.if_array(0), None))(ensemble, x)
