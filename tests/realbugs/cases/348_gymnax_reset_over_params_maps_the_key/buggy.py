import jax
import jax.numpy as jnp


def reset(key, params):
    # an environment's first observation: a random angle within the environment's maximum angle
    theta = params["max_angle"] * jax.random.uniform(key, (), minval=-1.0, maxval=1.0)
    return jnp.stack([jnp.cos(theta), jnp.sin(theta)])


def main():
    key_reset = jax.random.PRNGKey(0)
    env_params = {"max_angle": jnp.array([0.5, 1.0, 1.5, 2.0])}
    # map across environment parameters (e.g. for meta-learning): one key, many parameter settings
    reset_params = jax.vmap(reset, in_axes=(0, None))
    return reset_params(key_reset, env_params)
