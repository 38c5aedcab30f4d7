import equinox as eqx
import jax
import jax.numpy as jnp


class Classifier(eqx.Module):
    embed: eqx.nn.Embedding
    head: eqx.nn.Linear

    def __init__(self, key):
        k_embed, k_head = jax.random.split(key)
        self.embed = eqx.nn.Embedding(20, 6, key=k_embed)
        self.head = eqx.nn.Linear(6, 2, key=k_head)

    def __call__(self, token_ids):
        pooled = jax.vmap(self.embed)(token_ids).mean(axis=0)
        return self.head(pooled)


def make_eval_step(model, token_ids):
    return jax.vmap(model)(token_ids)


def main():
    n_devices = jax.device_count()
    model = Classifier(jax.random.PRNGKey(0))  # a freshly loaded checkpoint, one copy
    tokens = (jnp.arange(n_devices * 4 * 5).reshape(n_devices, 4, 5) * 7) % 20  # (devices, batch, seq)
    p_make_eval_step = eqx.filter_pmap(make_eval_step)
    return p_make_eval_step(model, tokens)
