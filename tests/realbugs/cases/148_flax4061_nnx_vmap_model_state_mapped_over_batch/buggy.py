import jax
import jax.numpy as jnp
from flax import nnx


class Classifier(nnx.Module):
    def __init__(self, rngs):
        self.hidden = nnx.Linear(6, 8, rngs=rngs)
        self.out = nnx.Linear(8, 3, rngs=rngs)

    def __call__(self, x):
        return self.out(jax.nn.relu(self.hidden(x)))


def predict(model, image):
    assert image.ndim == 1, "written for one example"
    return model(image)


def main():
    model = Classifier(nnx.Rngs(0))
    images = jnp.arange(4 * 6.0).reshape(4, 6) / 10.0
    return nnx.vmap(predict)(model, images)
