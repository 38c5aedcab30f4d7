import equinox as eqx
import jax
import jax.numpy as jnp


class Series(eqx.Module):
    value: jax.Array
    time: jax.Array
    name: str


def weighted_mean(series):
    return jnp.sum(series.value * series.time) / jnp.sum(series.time)


def main():
    members = Series(
        value=jnp.arange(30.0).reshape(5, 6),
        time=jnp.arange(1.0, 7.0),
        name="members",
    )
    axes = Series(value=0, time=None, name=None)
    return eqx.filter_vmap(weighted_mean, in_axes=(axes,))(members)
