import equinox as eqx
import jax
import jax.numpy as jnp
import jax.random as jr


class TinyViT(eqx.Module):
    patch_embedding: eqx.nn.Linear
    cls_token: jax.Array
    dropout: eqx.nn.Dropout
    head: eqx.nn.Linear

    def __init__(self, patch_dim, embed_dim, num_classes, key):
        key1, key2, key3 = jr.split(key, 3)
        self.patch_embedding = eqx.nn.Linear(patch_dim, embed_dim, key=key1)
        self.cls_token = jr.normal(key2, (1, embed_dim))
        self.dropout = eqx.nn.Dropout(0.5)
        self.head = eqx.nn.Linear(embed_dim, num_classes, key=key3)

    def __call__(self, x, enable_dropout, key):
        x = jax.vmap(self.patch_embedding)(x)
        x = jnp.concatenate((self.cls_token, x), axis=0)
        x = self.dropout(x, inference=not enable_dropout, key=key)
        return self.head(jnp.mean(x, axis=0))


def main():
    batch_size = 4
    model = TinyViT(patch_dim=6, embed_dim=8, num_classes=3, key=jr.PRNGKey(0))
    images = jnp.arange(batch_size * 5 * 6.0).reshape(batch_size, 5, 6) / 100.0
    subkeys = jr.split(jr.PRNGKey(1), batch_size)
    return jax.vmap(model)(images, True, subkeys)
