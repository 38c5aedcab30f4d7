import jax.numpy as jnp
from flax import nnx


class Scaled(nnx.Module):
    def __init__(self):
        self.gain = nnx.Param(jnp.arange(4.0))
        self.stats = nnx.BatchStat(jnp.arange(4.0) + 1.0)


def apply_gain(block):
    return block.gain * block.stats


def main():
    block = Scaled()
    return nnx.vmap(apply_gain, in_axes=0)(block)
