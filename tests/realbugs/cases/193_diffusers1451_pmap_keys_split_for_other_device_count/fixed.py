import jax
import jax.numpy as jnp


def shard(x):
    n = jax.local_device_count()
    return x.reshape((n, -1) + x.shape[1:])


def replicate(tree):
    n = jax.local_device_count()
    return jax.tree.map(lambda x: jnp.broadcast_to(x, (n, *x.shape)), tree)


def generate(prompt_ids, params, rng):
    # Start from noise, then take a few denoising steps conditioned on the prompt.
    latents = jax.random.normal(rng, (prompt_ids.shape[0], 4))
    cond = jnp.tanh(prompt_ids.astype(jnp.float32) @ params["embed"])
    for _ in range(3):
        latents = latents - 0.5 * (latents - cond)
    return latents


def main():
    num_samples = jax.device_count()
    params = {"embed": jnp.linspace(-0.2, 0.2, 6 * 4).reshape(6, 4)}
    prompt_ids = jnp.tile(jnp.arange(6, dtype=jnp.int32)[None, :], (num_samples, 1))
    prng_seed = jax.random.PRNGKey(0)
    prng_seed = jax.random.split(prng_seed, jax.device_count())
    p_generate = jax.pmap(generate)
    return p_generate(shard(prompt_ids), replicate(params), prng_seed)
