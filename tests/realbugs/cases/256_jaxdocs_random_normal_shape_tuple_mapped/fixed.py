import jax


def main():
    keys = jax.random.split(jax.random.key(7), 4)
    return jax.vmap(jax.random.normal, in_axes=(0, None))(keys, (3,))
