import equinox as eqx
import jax
import jax.numpy as jnp


class TinyCNN(eqx.Module):
    conv: eqx.nn.Conv2d
    linear: eqx.nn.Linear

    def __init__(self, key):
        k1, k2 = jax.random.split(key)
        self.conv = eqx.nn.Conv2d(1, 2, kernel_size=3, key=k1)
        self.linear = eqx.nn.Linear(2 * 4 * 4, 3, key=k2)

    def __call__(self, x):
        # x: one image, (channels, height, width)
        x = jax.nn.relu(self.conv(x))
        return self.linear(jnp.ravel(x))


def load_images():
    # a batch of 5 grayscale 6x6 images, as a loader returns them: (batch, height, width)
    return jnp.linspace(0.0, 1.0, 5 * 6 * 6).reshape(5, 6, 6)


def main():
    model = TinyCNN(jax.random.PRNGKey(0))
    x = load_images()[:, None]  # add the channel axis: (batch, 1, height, width)
    return jax.vmap(model)(x)
