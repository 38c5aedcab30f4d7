import jax
import jax.numpy as jnp
from flax import nnx


class Model(nnx.Module):
    def __init__(self, rngs):
        self.w = nnx.Param(nnx.initializers.lecun_normal()(rngs.params(), (1, 1)))

    def __call__(self, x):
        return x * self.w


def loss_fn(model, batch):
    return jnp.mean((model(batch) - 2.0 * batch) ** 2)


def train_step(model, batch):
    loss, grads = nnx.value_and_grad(loss_fn)(model, batch)
    grads = jax.lax.pmean(grads, axis_name="data")
    params = nnx.state(model, nnx.Param)
    nnx.update(model, jax.tree.map(lambda p, g: p - 0.05 * g, params, grads))
    return loss


def main():
    n_devices = jax.device_count()
    model = Model(nnx.Rngs(0))
    batch = jnp.linspace(0.1, 1.6, n_devices * 2).reshape(n_devices, 2, 1)  # (devices, per-device batch, 1)
    pmap_train_step = nnx.pmap(train_step, axis_name="data", in_axes=(None, 0), out_axes=0)
    loss = pmap_train_step(model, batch)
    return jnp.mean(loss), model.w[...]
