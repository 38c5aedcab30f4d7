import equinox as eqx
import jax
import jax.numpy as jnp


class LatentModel(eqx.Module):
    encoder: eqx.nn.Linear
    decoder: eqx.nn.Linear

    def __init__(self, key):
        k1, k2 = jax.random.split(key)
        self.encoder = eqx.nn.Linear(4, 2, key=k1)
        self.decoder = eqx.nn.Linear(2, 4, key=k2)

    def train(self, ts, ys, key):
        # reparameterised latent sample, then a reconstruction loss for one series
        latent = self.encoder(ys * ts) + 0.1 * jax.random.normal(key, (2,))
        return jnp.mean((self.decoder(latent) - ys) ** 2)


def main():
    model = LatentModel(jax.random.PRNGKey(0))
    ts_i = jnp.tile(jnp.linspace(0.0, 1.0, 4), (3, 1))
    ys_i = jnp.linspace(-1.0, 1.0, 12).reshape(3, 4)
    key_i = jax.random.split(jax.random.PRNGKey(1), 3)
    loss = eqx.filter_vmap(model.train)(ts_i, ys_i, key_i)
    return jnp.mean(loss)
