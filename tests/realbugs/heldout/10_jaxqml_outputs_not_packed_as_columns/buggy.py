import jax
import jax.numpy as jnp


def encode(x):
    # one sample's feature vector -> its doubled and its summed form, (3,) -> (3,)
    return x * 2.0 + jnp.sum(x)


def main():
    samples = jnp.arange(12.0).reshape(4, 3)  # 4 samples of 3 features, one per row
    # the downstream circuit reads one sample per column: features x samples
    features_by_sample = jax.vmap(encode)(samples)
    return features_by_sample[0]  # feature 0 of every sample
