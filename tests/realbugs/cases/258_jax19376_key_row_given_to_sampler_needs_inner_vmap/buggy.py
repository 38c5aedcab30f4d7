import jax


def step_noise(key):
    return jax.random.normal(key, (3,))


def main():
    keys = jax.random.split(jax.random.key(0), (4, 5))  # 4 chains, 5 steps each
    return jax.vmap(step_noise)(keys)
