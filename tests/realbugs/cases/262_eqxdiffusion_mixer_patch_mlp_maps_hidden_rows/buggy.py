import equinox as eqx
import jax
import jax.numpy as jnp


class MixerBlock(eqx.Module):
    patch_mixer: eqx.nn.MLP
    hidden_mixer: eqx.nn.MLP

    def __init__(self, num_patches, hidden_size, key):
        k1, k2 = jax.random.split(key)
        self.patch_mixer = eqx.nn.MLP(num_patches, num_patches, 8, 1, key=k1)
        self.hidden_mixer = eqx.nn.MLP(hidden_size, hidden_size, 8, 1, key=k2)

    def mix_patches(self, column):
        return self.patch_mixer(column)

    def mix_channels(self, row):
        return self.hidden_mixer(row)

    def __call__(self, y):
        # y: (num_patches, hidden_size); mix information across patches, then across channels
        y = y + jax.vmap(self.mix_patches)(y)
        y = y + jax.vmap(self.mix_channels)(y)
        return y


def main():
    block = MixerBlock(num_patches=4, hidden_size=6, key=jax.random.PRNGKey(0))
    y = jnp.linspace(-1.0, 1.0, 24).reshape(4, 6)
    return block(y)
