import jax.numpy as jnp
from flax import nnx


class Scaled(nnx.Module):
    def __init__(self):
        self.w = nnx.Param(jnp.arange(12.0).reshape(3, 4))  # 4 members along axis 1
        self.scale = nnx.BatchStat(jnp.array([1.0, 2.0, 3.0]))  # shared by all members


class Shift(nnx.Module):
    def __init__(self):
        self.v = nnx.Param(jnp.arange(12.0).reshape(4, 3) / 10.0)  # 4 members along axis 0


def score(m1, m2):
    return jnp.sum(m1.w[...] * m1.scale[...] * m2.v[...])


def main():
    m1, m2 = Scaled(), Shift()
    return nnx.vmap(score, in_axes=(1, 0))(m1, m2)
