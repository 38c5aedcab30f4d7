import dataclasses

import jax
import jax.numpy as jnp


@dataclasses.dataclass
class Normal:
    loc: jax.Array
    scale: jax.Array
    batch_shape: tuple  # static metadata, read off loc when the distribution is built

    def sample(self, key):
        eps = jax.random.normal(key, self.batch_shape)
        return self.loc + self.scale * eps


def make_normal(loc, scale):
    return Normal(loc, scale, jnp.shape(loc))


def main():
    jax.tree_util.register_dataclass(Normal, data_fields=["loc", "scale"], meta_fields=["batch_shape"])
    loc = jnp.array([0.0, 1.0, 2.0])
    scale = jnp.array([1.0, 0.5, 0.1])
    d = jax.vmap(make_normal, in_axes=(0, 0))(loc, scale)
    # sample under vmap too, one key per mapped distribution
    keys = jax.random.split(jax.random.PRNGKey(0), 3)
    return jax.vmap(lambda dist, key: dist.sample(key))(d, keys)
