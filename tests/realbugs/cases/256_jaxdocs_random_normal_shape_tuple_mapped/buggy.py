import jax


def main():
    keys = jax.random.split(jax.random.key(7), 4)
    return jax.vmap(jax.random.normal)(keys, (3,))
