import jax
import jax.numpy as jnp


def pointwise_loglik(samples, x, y):
    # log N(y | a + b x, 1) for every draw of one chain and every observation: (draws, obs)
    mu = samples["a"][:, None] + samples["b"][:, None] * x[None, :]
    return -0.5 * (y[None, :] - mu) ** 2 - 0.5 * jnp.log(2 * jnp.pi)


def main():
    x = jnp.linspace(-1.0, 1.0, 4)
    y = 0.5 * x + 0.1
    # samples grouped by chain: (chains, draws) = (2, 3)
    samples = {
        "a": jnp.array([[0.0, 0.1, 0.2], [0.3, 0.4, 0.5]]),
        "b": jnp.array([[0.5, 0.4, 0.6], [0.2, 0.7, 0.5]]),
    }
    # ArviZ wants (chain, draw, obs)
    return jax.vmap(pointwise_loglik, in_axes=(0, None, None), out_axes=0)(samples, x, y)
