import jax.numpy as jnp
from flax import nnx


class Model(nnx.Module):
    def __init__(self, rngs: nnx.Rngs):
        self.hidden = nnx.Linear(5, 4, rngs=rngs)
        self.out = nnx.Linear(4, 3, rngs=rngs)


def max_spectral_norm(m):
    norms = [jnp.linalg.norm(layer.kernel[...], ord=2) for layer in (m.hidden, m.out)]
    return jnp.max(jnp.stack(norms))


def main():
    model = Model(nnx.Rngs(0))
    state_axes = nnx.StateAxes({...: None})  # the model is replicated on every device
    check = nnx.pmap(max_spectral_norm, in_axes=(state_axes,), out_axes=0, axis_name="device")
    return check(model).mean()
