import jax
import jax.numpy as jnp
import optax


def predict(params, x):
    hidden = jnp.tanh(x @ params["w1"] + params["b1"])
    return hidden @ params["w2"] + params["b2"]


def loss_fn(params, x, label):
    logit = predict(params, x)
    return jnp.mean(optax.sigmoid_binary_cross_entropy(logit, label))


def main():
    params = {
        "w1": jnp.linspace(-0.5, 0.5, 12).reshape(4, 3),
        "b1": jnp.zeros(3),
        "w2": jnp.array([0.3, -0.2, 0.1]),
        "b2": jnp.array(0.05),
    }
    images = jnp.linspace(-1.0, 1.0, 24).reshape(6, 4)
    labels = jnp.array([0.0, 1.0, 1.0, 0.0, 1.0, 0.0])
    per_example_grad = jax.vmap(jax.grad(loss_fn), in_axes=(None, 0, None))
    grads = per_example_grad(params, images, labels)
    clipped = jax.tree.map(lambda g: jnp.clip(g, -0.1, 0.1), grads)
    return grads, jax.tree.map(lambda g: jnp.mean(g, axis=0), clipped)
