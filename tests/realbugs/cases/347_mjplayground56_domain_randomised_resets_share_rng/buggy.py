import jax
import jax.numpy as jnp


def reset(sys, rng):
    # one domain-randomised environment: its own friction, a random initial joint state
    q0 = 0.1 * jax.random.normal(rng, (3,))
    return sys["friction"] * q0


def main():
    n_envs = 4
    sys_v = {"friction": jnp.linspace(0.5, 1.5, n_envs)}
    rng = jax.random.PRNGKey(0)
    return jax.vmap(reset, in_axes=(0, None))(sys_v, rng)
