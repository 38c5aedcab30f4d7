import jax
import jax.numpy as jnp


def eval_step(metrics, variables, batch):
    preds = batch["image"] @ variables["kernel"]
    correct = (batch["mask"] & (batch["label"] == preds.argmax(axis=-1))).sum()
    total = batch["mask"].sum()
    return {
        "correct": metrics["correct"] + jax.lax.psum(correct, axis_name="batch"),
        "total": metrics["total"] + jax.lax.psum(total, axis_name="batch"),
    }


def main():
    n = jax.local_device_count()
    variables = {"kernel": jnp.linspace(-1.0, 1.0, 4 * 3).reshape(4, 3)}
    batch = {
        "image": jnp.sin(jnp.arange(n * 5 * 4, dtype=jnp.float32)).reshape(n, 5, 4),
        "label": (jnp.arange(n * 5) % 3).reshape(n, 5),
        "mask": (jnp.arange(n * 5) < n * 5 - 3).reshape(n, 5),  # the last 3 examples are padding
    }
    metrics = {"correct": 0, "total": 0}
    p_eval_step = jax.pmap(eval_step, axis_name="batch")
    return p_eval_step(metrics, variables, batch)
