import jax
import jax.numpy as jnp


def create_member(rng):
    # one ensemble member: a small linear layer initialised from its own key
    k1, k2 = jax.random.split(rng)
    return {"kernel": jax.random.normal(k1, (3, 2)) * 0.5, "bias": jax.random.normal(k2, (2,)) * 0.1}


def main():
    n = jax.local_device_count()
    rng = jax.random.PRNGKey(0)
    rngs = jax.random.split(rng, n)  # one key per device
    members = jax.pmap(create_member)(rngs)
    x = jnp.linspace(-1.0, 1.0, 4 * 3).reshape(4, 3)
    # ensemble prediction: the members' outputs averaged
    preds = jnp.einsum("bi,mio->mbo", x, members["kernel"]) + members["bias"][:, None, :]
    return preds.mean(axis=0), preds.std(axis=0)
