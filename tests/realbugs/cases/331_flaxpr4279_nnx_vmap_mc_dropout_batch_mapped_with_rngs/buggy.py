import jax.numpy as jnp
from flax import nnx


class Net(nnx.Module):
    def __init__(self, rngs):
        self.linear = nnx.Linear(3, 2, rngs=rngs)
        self.drop = nnx.Dropout(0.5, deterministic=False, rngs=rngs)

    def __call__(self, x):
        return self.drop(self.linear(x))


def main():
    model = Net(nnx.Rngs(params=0, dropout=1))
    batch = jnp.arange(12.0).reshape(4, 3) / 6.0
    state_axes = nnx.StateAxes({"dropout": 0, ...: None})

    # 4 Monte Carlo dropout samples of the whole batch: (samples, examples, 2)
    @nnx.split_rngs(splits=4, only="dropout")
    @nnx.vmap(in_axes=(state_axes, 0))
    def mc_samples(model, x):
        return model(x)

    samples = mc_samples(model, batch)
    return {"mean": samples.mean(axis=0), "std": samples.std(axis=0)}
