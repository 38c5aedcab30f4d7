import jax
import jax.numpy as jnp
import numpy as np
from jax import lax


def ring(n, shift):
    return [(i, (i + shift) % n) for i in range(n)]


def rule30_step(cells):
    # One step of Rule 30 on this device's slice, with one halo cell from each neighbour.
    n = lax.psum(1, "i")
    from_left = lax.ppermute(cells[-1:], "i", perm=ring(n, 1))
    from_right = lax.ppermute(cells[:1], "i", perm=ring(n, -1))
    padded = jnp.concatenate([from_left, cells, from_right])
    left, center, right = padded[:-2], padded[1:-1], padded[2:]
    return lax.bitwise_xor(left, lax.bitwise_or(center, right))


def main():
    board = np.zeros(40, dtype=bool)
    board[20] = True
    board = board.reshape(4, 10)
    step = jax.pmap(rule30_step, axis_name="i")
    for _ in range(5):
        board = step(board)
    return board
