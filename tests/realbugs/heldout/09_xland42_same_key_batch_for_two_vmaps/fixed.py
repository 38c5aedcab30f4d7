import jax
import jax.numpy as jnp


def sample_ruleset(key):
    return jax.random.randint(key, (2,), 0, 10)


def reset(key):
    return jax.random.uniform(key, (2,))


def main():
    num_envs = 4
    rng = jax.random.PRNGKey(0)
    rng, _rng1, _rng2 = jax.random.split(rng, num=3)
    ruleset_rng = jax.random.split(_rng1, num=num_envs)
    reset_rng = jax.random.split(_rng2, num=num_envs)
    rulesets = jax.vmap(sample_ruleset)(ruleset_rng)
    states = jax.vmap(reset)(reset_rng)
    return {"rulesets": rulesets, "states": states, "same_keys": jnp.all(ruleset_rng == reset_rng)}
