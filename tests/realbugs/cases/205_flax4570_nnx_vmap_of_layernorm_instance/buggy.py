import jax
from flax import nnx


@nnx.jit
def normalize_rows(norm, x):
    return nnx.vmap(norm)(x)


def main():
    norm = nnx.LayerNorm(10, rngs=nnx.Rngs(10))
    x = jax.random.uniform(jax.random.key(10), (15, 10))
    return normalize_rows(norm, x)
