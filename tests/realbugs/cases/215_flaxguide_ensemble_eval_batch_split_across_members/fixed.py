import jax
import jax.numpy as jnp


def create_member(rng):
    return {"w": jax.random.normal(rng, (4, 3)) * 0.5}


def apply_model(params, images, labels):
    logits = images @ params["w"]
    one_hot = jax.nn.one_hot(labels, 3)
    loss = -jnp.mean(jnp.sum(one_hot * jax.nn.log_softmax(logits), axis=-1))
    # Average the members' probabilities across the devices of the ensemble.
    probs = jax.lax.pmean(jax.nn.softmax(logits), axis_name="ensemble")
    accuracy = jnp.mean(jnp.argmax(probs, -1) == labels)
    return loss, accuracy


def main():
    n = jax.device_count()
    params = jax.pmap(create_member)(jax.random.split(jax.random.PRNGKey(0), n))
    # A test batch of 8 examples with 4 features and integer labels in [0, 3).
    images = jnp.cos(jnp.arange(8 * 4, dtype=jnp.float32) * 0.37).reshape(8, 4)
    labels = jnp.arange(8, dtype=jnp.int32) % 3
    return jax.pmap(apply_model, axis_name="ensemble", in_axes=(0, None, None))(params, images, labels)
