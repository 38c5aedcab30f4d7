import equinox as eqx
import jax
import jax.numpy as jnp


class RNN(eqx.Module):
    cell: eqx.nn.GRUCell
    linear: eqx.nn.Linear

    def __init__(self, key):
        k1, k2 = jax.random.split(key)
        self.cell = eqx.nn.GRUCell(2, 3, key=k1)
        self.linear = eqx.nn.Linear(3, 1, key=k2)

    def __call__(self, xs):
        # xs: one sequence, (length, 2)
        def step(hidden, x):
            return self.cell(x, hidden), None

        hidden, _ = jax.lax.scan(step, jnp.zeros(3), xs)
        return jax.nn.sigmoid(self.linear(hidden))


def simulate_spirals(starts, length):
    # rotate each start point a little per step; lax.scan stacks the steps first
    angles = jnp.linspace(0.2, -0.2, starts.shape[0])

    def step(points, _):
        c, s = jnp.cos(angles)[:, None], jnp.sin(angles)[:, None]
        rotated = jnp.concatenate([c * points[:, :1] - s * points[:, 1:], s * points[:, :1] + c * points[:, 1:]], 1)
        return 0.95 * rotated, rotated

    _, path = jax.lax.scan(step, starts, None, length=length)
    return path  # (length, batch, 2)


def main():
    model = RNN(jax.random.PRNGKey(0))
    starts = jnp.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.5], [0.5, -1.0]])
    xs = simulate_spirals(starts, length=4)
    return jax.vmap(model)(xs)
