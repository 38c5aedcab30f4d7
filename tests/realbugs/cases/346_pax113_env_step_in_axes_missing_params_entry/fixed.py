import jax
import jax.numpy as jnp


def step(key, state, action, params):
    # one environment step: damped dynamics plus noise, under the environment's parameters
    noise = params["noise"] * jax.random.normal(key, state.shape)
    new_state = params["damping"] * state + action + noise
    return new_state, -jnp.sum(new_state**2)


def main():
    n_envs = 4
    keys = jax.random.split(jax.random.PRNGKey(0), n_envs)
    states = jnp.linspace(-1.0, 1.0, 2 * n_envs).reshape(n_envs, 2)
    actions = jnp.array([0.1, -0.2, 0.3, 0.0])
    params = {"damping": 0.9, "noise": 0.05}
    step_rng = jax.vmap(step, in_axes=(0, 0, 0, None))
    return step_rng(keys, states, actions, params)
