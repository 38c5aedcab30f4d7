import equinox as eqx
import jax.numpy as jnp


class CDEReadout(eqx.Module):
    weight: jnp.ndarray

    def __call__(self, ts, coeffs):
        # integrate the control increments over this series' own time grid
        z = jnp.diff(ts) @ coeffs
        return jnp.tanh(z @ self.weight)


def main():
    model = CDEReadout(weight=jnp.array([1.0, -0.5]))
    ts = jnp.cumsum(jnp.linspace(0.1, 0.4, 3 * 5).reshape(3, 5), axis=1)  # 3 series, own times
    coeffs = jnp.linspace(-1.0, 1.0, 3 * 4 * 2).reshape(3, 4, 2)
    return eqx.filter_vmap(model, in_axes=(0, 0))(ts, coeffs)
