import jax
import jax.numpy as jnp


def corrupt(key, x):
    mask = jax.random.bernoulli(key, 0.8, x.shape)
    return jnp.where(mask, x, 0.0) / 0.8


@jax.jit
def denoising_batch(key, batch):
    noisy = jax.vmap(corrupt, in_axes=(None, 0))(key, batch)
    return noisy, batch


def main():
    batch = jnp.arange(1.0, 41.0).reshape(5, 8)
    return denoising_batch(jax.random.PRNGKey(0), batch)
