import jax
import jax.numpy as jnp


def reset(rng):
    # one environment's initial observation: a random joint configuration
    q = 0.1 * jax.random.normal(rng, (4,))
    return jnp.concatenate([jnp.cos(q), jnp.sin(q)])


def main():
    rng = jax.random.split(jax.random.PRNGKey(0), 6)
    return jax.vmap(reset)(rng)
