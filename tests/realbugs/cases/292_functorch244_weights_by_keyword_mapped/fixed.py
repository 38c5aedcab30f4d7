import jax
import jax.numpy as jnp


def weighted_sq_error(pred, target, weights):
    return jnp.sum(weights * (pred - target) ** 2)


@jax.jit
def per_example_loss(preds, targets, weights):
    return jax.vmap(weighted_sq_error, in_axes=(0, 0, None))(preds, targets, weights)


def main():
    preds = jnp.arange(16.0).reshape(4, 4) / 16.0
    targets = jnp.full((4, 4), 0.5)
    weights = jnp.array([1.0, 2.0, 0.5, 0.0])  # one weight per output, shared by every example
    return per_example_loss(preds, targets, weights)
