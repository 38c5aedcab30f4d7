import jax
import jax.numpy as jnp
from jax import random


def draw_y(key, theta):
    # posterior predictive: y ~ Normal(theta, 0.1) for one posterior sample of theta
    return theta + 0.1 * random.normal(key)


def main():
    theta_samples = jnp.arange(5.0)
    key = random.PRNGKey(0)
    y = jax.vmap(draw_y, in_axes=(None, 0))(key, theta_samples)
    return {"theta": theta_samples, "y": y}
