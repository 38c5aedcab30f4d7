import jax
import jax.numpy as jnp
from flax import nnx


class Model(nnx.Module):
    def __init__(self, rngs: nnx.Rngs):
        self.hidden = nnx.Linear(5, 8, rngs=rngs)
        self.out = nnx.Linear(8, 3, rngs=rngs)

    def __call__(self, x):
        return self.out(jax.nn.relu(self.hidden(x)))


def eval_loss(m, x, y):
    return jnp.mean((m(x) - y) ** 2)


def main():
    model = Model(nnx.Rngs(0))
    # one shard of the evaluation batch per device: (devices, per-device batch, features)
    x = jnp.linspace(-1.0, 1.0, 8 * 2 * 5).reshape(8, 2, 5)
    y = jnp.cos(jnp.arange(8 * 2 * 3.0)).reshape(8, 2, 3)
    state_axes = nnx.StateAxes({...: None})  # the model is replicated on every device
    parallel_eval = nnx.pmap(eval_loss, in_axes=(state_axes, 0, 0), out_axes=0, axis_name="device")
    return parallel_eval(model, x, y).mean()
