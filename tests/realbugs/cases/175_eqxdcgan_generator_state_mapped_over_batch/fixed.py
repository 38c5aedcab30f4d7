import equinox as eqx
import jax
import jax.numpy as jnp


class Generator(eqx.Module):
    project: eqx.nn.Linear
    norm: eqx.nn.BatchNorm
    out: eqx.nn.Linear

    def __init__(self, latent_size, key):
        k1, k2 = jax.random.split(key)
        self.project = eqx.nn.Linear(latent_size, 3, key=k1)
        self.norm = eqx.nn.BatchNorm(3, axis_name="batch")
        self.out = eqx.nn.Linear(3, 5, key=k2)

    def __call__(self, z, state):
        h, state = self.norm(self.project(z), state)
        return jnp.tanh(self.out(jax.nn.relu(h))), state


def main():
    generator, generator_state = eqx.nn.make_with_state(Generator)(4, jax.random.PRNGKey(0))
    noise = jax.random.normal(jax.random.PRNGKey(1), (8, 4))
    fake_batch, generator_state = jax.vmap(generator, axis_name="batch", in_axes=(0, None), out_axes=(0, None))(
        noise, generator_state
    )
    return fake_batch, jax.tree.leaves(generator_state)
