from typing import NamedTuple

import jax
import jax.numpy as jnp


class TrainState(NamedTuple):
    step: jax.Array
    params: dict


def loss_fn(state, batch):
    pred = batch @ state.params["w"] + state.params["b"]
    return jnp.mean(pred**2)


def main():
    state = TrainState(step=jnp.array(0), params={"w": jnp.arange(3.0) / 3.0, "b": jnp.array(0.5)})
    batch = jnp.arange(24.0).reshape(4, 2, 3)
    return jax.pmap(loss_fn)(state, batch)
