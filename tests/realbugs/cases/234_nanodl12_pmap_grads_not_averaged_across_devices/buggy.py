import jax.numpy as jnp
import optax
from flax import nnx


def train_step(model, optimizer, x, y):
    def loss_fn(model):
        return jnp.mean((model(x) - y) ** 2)

    loss, grads = nnx.value_and_grad(loss_fn)(model)
    optimizer.update(model, grads)
    return loss


def main():
    model = nnx.Linear(3, 1, rngs=nnx.Rngs(0))
    optimizer = nnx.Optimizer(model, optax.sgd(0.1), wrt=nnx.Param)
    x = jnp.linspace(-1.0, 1.0, 8 * 2 * 3).reshape(8, 2, 3)
    y = jnp.arange(8 * 2, dtype=jnp.float32).reshape(8, 2, 1) / 16.0
    step = nnx.pmap(train_step, in_axes=(None, None, 0, 0), axis_name="devices")
    losses = step(model, optimizer, x, y)
    return losses, model.kernel[...], model.bias[...]
