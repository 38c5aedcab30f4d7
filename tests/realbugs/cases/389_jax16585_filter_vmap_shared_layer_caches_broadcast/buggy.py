import equinox as eqx
import jax.numpy as jnp


def forward(layers, x):
    # a stack of tanh layers; each layer's cache is its projection of its input (like a key cache)
    caches = []
    for w in layers:
        h = x @ w
        caches.append(h)
        x = jnp.tanh(h)
    return x, caches


def main():
    w = jnp.linspace(-0.5, 0.5, 9).reshape(3, 3)
    shared = [w, w.T]  # the first layers: one copy, used by every model
    per_model = [jnp.stack([w * 0.5, w * 1.5]), jnp.stack([w.T * 2.0, w.T * -1.0])]  # 2 copies each
    x = jnp.array([0.3, -0.2, 0.9])
    run = eqx.filter_vmap(forward, in_axes=([None, None, 0, 0], None))
    out, caches = run(shared + per_model, x)
    return out, caches
