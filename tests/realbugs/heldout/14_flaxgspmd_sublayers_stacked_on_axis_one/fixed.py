import jax
import jax.numpy as jnp
from flax import nnx


class DotReluDot(nnx.Module):
    def __init__(self, depth: int, rngs: nnx.Rngs):
        self.dot1 = nnx.Linear(depth, 4 * depth, use_bias=False, rngs=rngs)
        self.dot2 = nnx.Linear(4 * depth, depth, use_bias=False, rngs=rngs)

    def __call__(self, x):
        return self.dot2(jax.nn.relu(self.dot1(x)))


class MultiDotReluDot(nnx.Module):
    def __init__(self, depth: int, num_layers: int, rngs: nnx.Rngs):
        @nnx.vmap(out_axes=0, transform_metadata={nnx.PARTITION_NAME: None})
        def create_sublayers(r):
            return DotReluDot(depth, r)

        self.layers = create_sublayers(rngs.split(num_layers))

    def __call__(self, x):
        def scan_over_layers(x, layer):
            return layer(x), None

        x, _ = jax.lax.scan(scan_over_layers, x, self.layers)
        return x


def main():
    model = MultiDotReluDot(2, 3, nnx.Rngs(0))
    return model(jnp.linspace(-1.0, 1.0, 6).reshape(3, 2))
