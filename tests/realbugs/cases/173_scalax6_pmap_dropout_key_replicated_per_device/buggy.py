import equinox as eqx
import jax
import jax.numpy as jnp


class Classifier(eqx.Module):
    linear: eqx.nn.Linear
    dropout: eqx.nn.Dropout
    head: eqx.nn.Linear

    def __init__(self, key):
        k1, k2 = jax.random.split(key)
        self.linear = eqx.nn.Linear(4, 8, key=k1)
        self.dropout = eqx.nn.Dropout(0.5)
        self.head = eqx.nn.Linear(8, 2, key=k2)

    def __call__(self, x, key):
        return self.head(self.dropout(jax.nn.relu(self.linear(x)), key=key))


@eqx.filter_value_and_grad
def compute_loss(model, x, y, key):
    keys = jax.random.split(key, x.shape[0])
    logits = jax.vmap(model)(x, keys)
    return -jnp.mean(jnp.take_along_axis(jax.nn.log_softmax(logits), y[:, None], axis=1))


def make_step(model, x, y, key):
    key, new_key = jax.random.split(key)
    loss, grads = compute_loss(model, x, y, key)
    grads = jax.lax.pmean(grads, axis_name="devices")
    model = eqx.apply_updates(model, jax.tree.map(lambda g: -0.1 * g, grads))
    return loss, model, new_key


def replicate(tree, n):
    return jax.tree.map(lambda a: jnp.stack([a] * n) if eqx.is_array(a) else a, tree)


def main():
    n = jax.device_count()
    model = Classifier(jax.random.PRNGKey(0))
    x = jnp.ones((n, 3, 4))  # every device holds the same 3 examples
    y = jnp.zeros((n, 3), dtype=jnp.int32)
    p_make_step = eqx.filter_pmap(make_step, axis_name="devices")
    model = replicate(model, n)
    train_key = replicate(jax.random.PRNGKey(1), n)  # one key, copied to every device
    loss, model, train_key = p_make_step(model, x, y, train_key)
    return loss, model.linear.weight
