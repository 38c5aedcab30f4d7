import jax
import jax.numpy as jnp


def predict(rng_key, post_sample, marriage):
    mu = post_sample["a"] + post_sample["bM"] * marriage
    noise = jax.random.normal(rng_key, marriage.shape)
    return mu + post_sample["sigma"] * noise


def main():
    marriage = jnp.linspace(-1.5, 1.5, 6)
    n_draws = 5
    samples = {
        "a": jnp.linspace(-0.1, 0.1, n_draws),
        "bM": jnp.linspace(0.2, 0.4, n_draws),
        "sigma": jnp.linspace(0.8, 1.0, n_draws),
    }
    rng_key = jax.random.PRNGKey(2)
    predict_fn = jax.vmap(lambda key, s: predict(key, s, marriage))
    return predict_fn(rng_key, samples)
