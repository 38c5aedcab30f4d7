import jax
import jax.numpy as jnp
import jax.scipy.stats as stats

OBSERVED = 10.0 + 20.0 * jnp.sin(jnp.arange(50.0))


def logdensity(position):
    loc, log_scale = position[0], position[1]
    return jnp.sum(stats.norm.logpdf(OBSERVED, loc, jnp.exp(log_scale)))


def rmh_step(key, position):
    key_move, key_accept = jax.random.split(key)
    proposal = position + 0.5 * jax.random.normal(key_move, position.shape)
    log_ratio = logdensity(proposal) - logdensity(position)
    accept = jnp.log(jax.random.uniform(key_accept)) < log_ratio
    return jnp.where(accept, proposal, position)


def inference_loop(rng_key, initial_position):
    def one_step(position, key):
        position = rmh_step(key, position)
        return position, position

    keys = jax.random.split(rng_key, 30)
    _, positions = jax.lax.scan(one_step, initial_position, keys)
    return positions


def main():
    num_chains = 4
    rng_key = jax.random.PRNGKey(0)
    chain_keys = jax.random.split(rng_key, num_chains)
    initial_positions = jnp.array([[0.0, 2.0], [5.0, 3.0], [10.0, 3.5], [15.0, 2.5]])
    run_chains = jax.vmap(inference_loop, in_axes=(0, 0))
    return run_chains(chain_keys, initial_positions)
