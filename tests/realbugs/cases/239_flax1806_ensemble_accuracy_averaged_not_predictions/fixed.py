import jax
import jax.numpy as jnp
from flax import nnx


@nnx.split_rngs(splits=8)
@nnx.vmap(in_axes=(0,), out_axes=0)
def create_members(rngs):
    return nnx.Linear(3, 4, rngs=rngs)


def eval_step(member, images, labels):
    probs = jax.nn.softmax(member(images))
    probs = jax.lax.pmean(probs, axis_name="ensemble")
    return jnp.mean(jnp.argmax(probs, axis=-1) == labels)


def main():
    ensemble = create_members(nnx.Rngs(0))
    images = jnp.cos(jnp.arange(12 * 3, dtype=jnp.float32)).reshape(12, 3)
    labels = jnp.arange(12) % 4
    accuracies = nnx.pmap(eval_step, in_axes=(0, None, None), axis_name="ensemble")(ensemble, images, labels)
    return jnp.mean(accuracies)
