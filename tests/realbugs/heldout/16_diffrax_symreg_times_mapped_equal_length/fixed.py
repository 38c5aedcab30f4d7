import equinox as eqx
import jax.numpy as jnp


class DecayModel(eqx.Module):
    rates: jnp.ndarray

    def __call__(self, ts, y0):
        # y(t) = y0 * exp(-rate * t) on the whole time grid: (len(ts), 2)
        return jnp.exp(-jnp.outer(ts, self.rates)) * y0[None, :]


def main():
    model = DecayModel(rates=jnp.array([0.5, 2.0]))
    ts = jnp.linspace(0.0, 1.0, 5)
    ys = jnp.linspace(0.5, 1.5, 5 * 5 * 2).reshape(5, 5, 2)  # 5 trajectories of 5 times
    vmap_model = eqx.filter_vmap(model, in_axes=(None, 0))
    pred_ys = vmap_model(ts, ys[:, 0])
    return jnp.mean((pred_ys - ys) ** 2), pred_ys
