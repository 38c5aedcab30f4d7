import jax.numpy as jnp
from flax import nnx


class GaussianMLP(nnx.Module):
    def __init__(self, rngs):
        self.hidden = nnx.Linear(2, 8, rngs=rngs)
        self.mean = nnx.Linear(8, 3, rngs=rngs)
        self.log_var = nnx.Linear(8, 3, rngs=rngs)

    def __call__(self, x):
        h = nnx.swish(self.hidden(x))
        return self.mean(h), 3.0 * self.log_var(h)


def forward(model, x):
    return model(x)


def safe_log_var(log_var, min_log_var, max_log_var):
    log_var = max_log_var - nnx.softplus(max_log_var - log_var)
    return min_log_var + nnx.softplus(log_var - min_log_var)


def main():
    n_ensemble = 3

    @nnx.split_rngs(splits=n_ensemble)
    @nnx.vmap
    def make_model(rngs):
        return GaussianMLP(rngs)

    ensemble = make_model(nnx.Rngs(0))
    x = jnp.linspace(-2.0, 2.0, 10).reshape(5, 2)  # inputs shared by every member
    means, log_vars = nnx.vmap(forward, in_axes=(0, None))(ensemble, x)  # (members, samples, outputs)
    min_log_var = jnp.array([-3.0, -1.0, 0.0])  # one bound per output
    max_log_var = jnp.array([0.5, 1.0, 2.0])
    per_sample = nnx.vmap(safe_log_var, in_axes=(0, None, None))
    per_member = nnx.vmap(per_sample, in_axes=(0, None, None))
    return means, per_member(log_vars, min_log_var, max_log_var)
