import equinox as eqx
import jax
import jax.numpy as jnp


class Sample(eqx.Module):
    value: jax.Array
    weight: jax.Array
    name: str


def stack(samples):
    """One Sample whose array leaves gain a leading axis; the other leaves are kept from the first."""
    return jax.tree.map(lambda *leaves: jnp.stack(leaves) if eqx.is_array(leaves[0]) else leaves[0], *samples)


def loss(model, sample):
    return sample.weight * jnp.sum(model(sample.value) ** 2)


def main():
    model = eqx.nn.Linear(3, 2, key=jax.random.PRNGKey(0))
    samples = [Sample(jnp.arange(3.0) + i, jnp.asarray(1.0 + 0.5 * i), "train") for i in range(5)]
    xs = stack(samples)
    return eqx.filter_vmap(loss, in_axes=(None, eqx.if_array(0)))(model, xs)
