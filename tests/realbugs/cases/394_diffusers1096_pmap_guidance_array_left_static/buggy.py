import jax
import jax.numpy as jnp


def _generate(prompt_embeds, latents, guidance_scale, num_inference_steps):
    for _ in range(num_inference_steps):
        noise_uncond = latents * 0.5
        noise_text = latents * 0.5 + prompt_embeds
        noise_pred = noise_uncond + guidance_scale * (noise_text - noise_uncond)
        latents = latents - 0.1 * noise_pred
    return latents


def main():
    n = jax.local_device_count()
    prompt_embeds = jnp.arange(n * 6.0).reshape(n, 2, 3) / 10.0
    latents = jnp.ones((n, 2, 3))
    # the guidance scale is now an array, one copy per device, so changing it does not recompile
    guidance_scale = jnp.full((n,), 7.5)
    p_generate = jax.pmap(_generate, static_broadcasted_argnums=(2, 3))
    return p_generate(prompt_embeds, latents, guidance_scale, 4)
