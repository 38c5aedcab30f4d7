import jax
import jax.numpy as jnp


def share_of_total(load):
    # Each device's share of the load summed over the devices.
    return load / jax.lax.psum(load, axis_name="i")


per_device = jax.pmap(share_of_total, axis_name="i")


def experiment(loads):
    return per_device(loads)


def main():
    n = jax.local_device_count()
    # Three independent experiments, each with one load per device.
    loads = jnp.arange(1.0, 3 * n + 1.0).reshape(3, n)
    return jax.vmap(experiment, axis_name="i")(loads)
