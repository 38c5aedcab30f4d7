import jax
import jax.numpy as jnp


def main():
    n = jax.local_device_count()
    shards_x = jnp.arange(n * 6.0).reshape(n, 3, 2) / 10.0
    shards_y = jnp.arange(n * 3.0).reshape(n, 3)

    def get_samples(i):
        # device i takes its own data shard and its own chain key
        return shards_x[i], shards_y[i], jax.random.PRNGKey(i)

    return jax.pmap(get_samples, static_broadcasted_argnums=0)(jnp.arange(n))
