import equinox as eqx
import jax.numpy as jnp


def centre(offset, readings):
    # one device's sensor: its 12 readings, shifted by the shared calibration offset
    return readings - offset


def main():
    offset = jnp.asarray(1.5)
    # the log is time-major: 12 time steps (rows) x 8 sensors (columns), one sensor per device
    log = jnp.arange(96.0).reshape(12, 8) / 10.0
    return eqx.filter_pmap(centre, in_axes=(None, 1))(offset, log)
