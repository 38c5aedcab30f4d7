import jax
import jax.numpy as jnp


def init_head(extra_layers, overrides):
    # per-member head: fixed initial bias, plus any extra per-member layers (none here)
    return {"bias": jnp.zeros(2), "extra": extra_layers, "overrides": overrides}


def main():
    extra_layers = []  # this configuration has no extra layers
    overrides = {}  # and no per-member overrides
    heads = jax.vmap(init_head)(extra_layers, overrides)
    return heads["bias"]
