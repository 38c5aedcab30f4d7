import equinox as eqx
import jax
import jax.numpy as jnp


def embed(model, x):
    return model(x)


def main():
    model = eqx.nn.Linear(3, 3, key=jax.random.PRNGKey(0))
    xs = jnp.arange(9.0).reshape(3, 3) / 4.0  # 3 examples of 3 features
    # the pooling below wants the features feature-major: shape (features, examples)
    feats = eqx.filter_vmap(embed, in_axes=(None, 0), out_axes=-1)(model, xs)
    weights = jnp.array([0.2, 0.3, 0.5])  # one weight per example
    return feats @ weights
