import jax
import jax.numpy as jnp


def run_trajectory(state, n_steps, decay):
    for _ in range(n_steps):
        state = state - decay * state
    return state


def main():
    sim_state = jnp.arange(1.0, 9.0).reshape(2, 4)
    decay = jnp.linspace(0.1, 0.8, 8).reshape(2, 4)
    n_steps = 3

    def run_fixed_steps(state, decay):
        return run_trajectory(state, n_steps, decay)

    per_device = jax.vmap(run_fixed_steps, in_axes=(0, 0))
    return jax.pmap(per_device, in_axes=(0, 0))(sim_state, decay)
