import equinox as eqx
import jax
import jax.numpy as jnp


class Member(eqx.Module):
    arr: jax.Array
    scale: jax.Array


def make_member(arr, scale):
    return Member(arr=arr, scale=scale)


def evaluate_member(member, offset):
    return member.arr * member.scale + offset


def main():
    arrs = jnp.arange(9.0).reshape(3, 3)  # 3 ensemble members, 3 features each
    scales = jnp.array([1.0, -1.0, 0.5])
    ensemble = eqx.filter_vmap(make_member, in_axes=(0, 0))(arrs, scales)
    offset = jnp.array([10.0, 20.0, 30.0])  # one offset per feature, the same for every member
    return eqx.filter_vmap(evaluate_member, in_axes=(0, None))(ensemble, offset)
