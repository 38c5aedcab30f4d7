import equinox as eqx
import jax
import jax.numpy as jnp


def forward(model, x):
    return model(x)


evaluate_ensemble = eqx.filter_vmap(forward, in_axes=(eqx.if_array(0), None))


def predict_one(ensemble, x):
    return evaluate_ensemble(ensemble, x)


def main():
    keys = jax.random.split(jax.random.PRNGKey(0), 4)
    ensemble = eqx.filter_vmap(lambda k: eqx.nn.MLP(2, 1, 8, 1, key=k))(keys)
    xs = jnp.linspace(-1.0, 1.0, 8).reshape(4, 2)
    targets = jnp.arange(16.0).reshape(4, 4, 1) / 16.0  # (member, example, 1)
    preds = jax.vmap(predict_one, in_axes=(None, 0))(ensemble, xs)
    return jnp.mean((preds - targets) ** 2, axis=(1, 2))
