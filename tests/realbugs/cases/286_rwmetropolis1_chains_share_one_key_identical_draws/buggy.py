import jax
import jax.numpy as jnp
from jax.scipy.stats import norm

NUM_SAMPLES = 20


def mixture_logpdf(x):
    return jnp.logaddexp(jnp.log(0.3) + norm.logpdf(x, -2.0, 1.2), jnp.log(0.7) + norm.logpdf(x, 1.5, 0.8))


def rw_metropolis_sampler(rng_key, initial_position):
    def kernel(state, key):
        position, log_prob = state
        key_move, key_accept = jax.random.split(key)
        proposal = position + 0.5 * jax.random.normal(key_move)
        proposal_log_prob = mixture_logpdf(proposal)
        accept = jnp.log(jax.random.uniform(key_accept)) < proposal_log_prob - log_prob
        position = jnp.where(accept, proposal, position)
        log_prob = jnp.where(accept, proposal_log_prob, log_prob)
        return (position, log_prob), position

    keys = jax.random.split(rng_key, NUM_SAMPLES)
    _, positions = jax.lax.scan(kernel, (initial_position, mixture_logpdf(initial_position)), keys)
    return positions


def main():
    n_chains = 4
    rng_key = jax.random.PRNGKey(42)
    initial_position = jnp.zeros(n_chains)
    run_mcmc = jax.vmap(rw_metropolis_sampler, in_axes=(None, 0))
    return run_mcmc(rng_key, initial_position)
