import jax.numpy as jnp
from flax import nnx


class StackedLayers(nnx.Module):
    def __init__(self, num_layers: int, rngs: nnx.Rngs):
        @nnx.vmap(in_axes=(0,), out_axes=0)
        def vmapped_create(rngs: nnx.Rngs) -> nnx.Module:
            return nnx.Linear(4, 4, rngs=rngs)

        self.num_layers = num_layers
        self._stacked = vmapped_create(rngs.split(num_layers))

    def __call__(self, x):
        for i in range(self.num_layers):
            x = jnp.tanh(x @ self._stacked.kernel[i] + self._stacked.bias[i][None])
        return x


def main():
    model = StackedLayers(3, nnx.Rngs(0))
    return model(jnp.linspace(-1.0, 1.0, 8).reshape(2, 4))
