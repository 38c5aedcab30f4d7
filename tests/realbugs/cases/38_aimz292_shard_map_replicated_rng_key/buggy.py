import jax
import jax.numpy as jnp
from jax.sharding import Mesh
from jax.sharding import PartitionSpec as P


def perturb(obs, rng_key):
    keys = jax.random.split(rng_key, obs.shape[0])
    noise = jax.vmap(lambda k: jax.random.normal(k, ()))(keys)
    return obs + noise


def main():
    mesh = Mesh(jax.devices(), ("obs",))
    obs = jnp.zeros(2 * len(jax.devices()))
    sample = jax.shard_map(perturb, mesh=mesh, in_specs=(P("obs"), P()), out_specs=P("obs"))
    return sample(obs, jax.random.key(3))
