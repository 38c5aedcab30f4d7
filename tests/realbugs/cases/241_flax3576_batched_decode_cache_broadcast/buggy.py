import jax.numpy as jnp
from flax import nnx


class Decoder(nnx.Module):
    def __init__(self, dim, rngs):
        self.proj = nnx.Linear(dim, dim, rngs=rngs)
        self.dim = dim

    def init_cache(self, batch_size):
        self.memory = nnx.Cache(jnp.zeros((batch_size, self.dim)))

    def __call__(self, token):
        h = jnp.tanh(self.proj(token) + 0.5 * self.memory[...])
        self.memory[...] = h
        return h


def decode_step(model, token):
    return model(token)


def main():
    model = Decoder(3, rngs=nnx.Rngs(0))
    model.init_cache(4)
    tokens = jnp.sin(jnp.arange(2 * 4 * 3, dtype=jnp.float32)).reshape(2, 4, 3)
    step = nnx.vmap(decode_step, in_axes=(None, 0))
    for t in range(tokens.shape[0]):
        out = step(model, tokens[t])
    return out, model.memory[...]
