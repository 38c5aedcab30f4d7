import jax
import jax.numpy as jnp

N_ODE_STATES = 1


def decay(y0, k, t):
    return y0 * jnp.exp(-k * t)


def solve(y0, parameters, times):
    Y_0 = [y0[name] for name in y0]
    ode_args = [parameters["k"], times]
    loop_eval = jax.vmap(decay, in_axes=(*[0] * N_ODE_STATES, *[0] * len(ode_args)))
    return loop_eval(*Y_0, *ode_args)


def main():
    parameters = {"k": jnp.arange(1.0, 5.0) / 10.0}
    times = jnp.arange(12.0).reshape(4, 3)
    return solve({}, parameters, times)
