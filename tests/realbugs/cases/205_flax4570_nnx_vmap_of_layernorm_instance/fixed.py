import jax
from flax import nnx


@nnx.jit
def normalize_rows(norm, x):
    @nnx.vmap(in_axes=(None, 0), out_axes=0)
    def apply_norm(norm, row):
        return norm(row)

    return apply_norm(norm, x)


def main():
    norm = nnx.LayerNorm(10, rngs=nnx.Rngs(10))
    x = jax.random.uniform(jax.random.key(10), (15, 10))
    return normalize_rows(norm, x)
