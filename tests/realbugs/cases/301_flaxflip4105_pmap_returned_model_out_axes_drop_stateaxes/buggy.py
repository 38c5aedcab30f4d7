import jax
import jax.numpy as jnp
from flax import nnx


class Model(nnx.Module):
    def __init__(self, rngs):
        self.linear = nnx.Linear(3, 2, rngs=rngs)
        self.dropout = nnx.Dropout(0.5, rngs=rngs)

    def __call__(self, x):
        return self.linear(self.dropout(x))


def loss_fn(model, x):
    return jnp.mean(model(x) ** 2)


def train_step(model, x):
    loss, grads = nnx.value_and_grad(loss_fn)(model, x)
    grads = jax.lax.pmean(grads, axis_name="data")
    params = nnx.state(model, nnx.Param)
    nnx.update(model, jax.tree.map(lambda p, g: p - 0.1 * g, params, grads))
    return model, loss


def main():
    n_devices = jax.device_count()
    model = Model(nnx.Rngs(params=0, dropout=1))
    x = jnp.linspace(-1.0, 1.0, n_devices * 4 * 3).reshape(n_devices, 4, 3)
    state_axes = nnx.StateAxes({"dropout": 0, ...: None})  # one dropout key per device, the rest replicated
    step = nnx.split_rngs(splits=n_devices, only="dropout")(
        nnx.pmap(train_step, in_axes=(state_axes, 0), out_axes=(None, 0), axis_name="data")
    )
    model, loss = step(model, x)
    return loss, model.linear.kernel[...]
