import equinox as eqx
import jax
import jax.numpy as jnp


class Pose(eqx.Module):
    offset: jax.Array
    angle: jax.Array


class Optics(eqx.Module):
    wavelength: jax.Array
    defocus: jax.Array


def make_image_config(offset, angle):
    pose = Pose(offset, angle)  # one per image
    optics = Optics(jnp.array(0.0197), jnp.linspace(1.0, 2.0, 5))  # the same for every image
    return pose, optics


def render(pose, optics):
    phase = jnp.sum(pose.offset) * jnp.cos(pose.angle)
    return jnp.sin(phase + optics.defocus / optics.wavelength)


def main():
    offsets = jnp.arange(12.0).reshape(6, 2) / 10.0
    angles = jnp.linspace(0.0, 1.0, 6)
    poses, optics = eqx.filter_vmap(make_image_config, out_axes=(0, None))(offsets, angles)
    images = jax.vmap(render, in_axes=(0, None))(poses, optics)
    return images, optics.wavelength, optics.defocus
