import jax
import jax.numpy as jnp


def vector_field(t, y, constant_args, omega):
    damping, drive = constant_args
    position, velocity = y[0], y[1]
    accel = -(omega**2) * position - damping * velocity + drive * jnp.cos(t)
    return jnp.stack([velocity, accel])


def solve(t0, y0, constant_args, varying_args):
    dt = 0.05

    def step(carry, _):
        t, y = carry
        k1 = vector_field(t, y, constant_args, varying_args)
        k2 = vector_field(t + dt / 2, y + dt / 2 * k1, constant_args, varying_args)
        k3 = vector_field(t + dt / 2, y + dt / 2 * k2, constant_args, varying_args)
        k4 = vector_field(t + dt, y + dt * k3, constant_args, varying_args)
        y = y + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        return (t + dt, y), y

    _, ys = jax.lax.scan(step, (t0, y0), None, length=40)
    return ys


def main():
    y0 = jnp.stack([jnp.linspace(0.5, 1.5, 5), jnp.zeros(5)], axis=-1)
    omegas = jnp.linspace(1.0, 3.0, 5)
    constant_args = (0.1, 0.2)
    solve_all = jax.vmap(solve, in_axes=(None, 0, None, 0))
    return solve_all(0.0, y0, constant_args, omegas)
