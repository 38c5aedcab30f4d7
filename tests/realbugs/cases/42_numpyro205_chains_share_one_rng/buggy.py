import jax
import jax.numpy as jnp


def random_walk_chain(rng, start):
    def step(position, key):
        proposal = position + 0.5 * jax.random.normal(key, position.shape)
        accept = jnp.abs(proposal) < jnp.abs(position) + 1.0
        position = jnp.where(accept, proposal, position)
        return position, position

    _, trace = jax.lax.scan(step, start, jax.random.split(rng, 20))
    return trace


def main():
    n = jax.local_device_count()
    starts = jnp.zeros((n, 2))
    run = jax.pmap(random_walk_chain, in_axes=(None, 0))
    return run(jax.random.key(0), starts)
