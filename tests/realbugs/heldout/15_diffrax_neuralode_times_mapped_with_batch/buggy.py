import equinox as eqx
import jax
import jax.numpy as jnp


class NeuralODE(eqx.Module):
    linear: eqx.nn.Linear

    def __init__(self, key):
        self.linear = eqx.nn.Linear(2, 2, key=key)

    def __call__(self, ts, y0):
        # explicit Euler on the shared time grid: one trajectory (len(ts), 2)
        def step(y, dt):
            y = y + dt * jnp.tanh(self.linear(y))
            return y, y

        _, ys = jax.lax.scan(step, y0, jnp.diff(ts))
        return jnp.concatenate([y0[None], ys])


def main():
    model = NeuralODE(jax.random.PRNGKey(0))
    ts = jnp.linspace(0.0, 1.0, 6)
    ys0 = jnp.linspace(-1.0, 1.0, 8).reshape(4, 2)  # a batch of 4 initial conditions
    return eqx.filter_vmap(model)(ts, ys0)
