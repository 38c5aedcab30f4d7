from functools import partial

import jax
import jax.numpy as jnp

Y0 = jnp.array(1.0)


@partial(jax.vmap, in_axes=(0, None, None))
def batch_sde_solve(key, step_times, args):
    # Euler-Maruyama for dy = -theta * y dt + sigma dW on the given step times
    theta, sigma = args[0], args[1]
    dts = jnp.diff(step_times)
    dws = jnp.sqrt(dts) * jax.random.normal(key, dts.shape)

    def step(y, inc):
        dt, dw = inc
        y = y - theta * y * dt + sigma * dw
        return y, y

    _, ys = jax.lax.scan(step, Y0, (dts, dws))
    return jnp.concatenate([Y0[None], ys])


def main():
    step_times = jnp.linspace(0.0, 1.0, 9)
    args = jnp.array([0.5, 0.3])
    keys = jax.random.split(jax.random.PRNGKey(0), 6)
    return batch_sde_solve(keys, step_times, args)
