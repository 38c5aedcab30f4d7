import jax
import jax.numpy as jnp


def step(particle):
    # one particle: scalar position and velocity
    return particle["pos"] + 0.1 * particle["vel"]


def main():
    particles = [{"pos": jnp.array(float(i)), "vel": jnp.array(1.0 + i)} for i in range(4)]
    # struct of arrays: stack the list of pytrees into one pytree with a leading axis of 4
    stacked = jax.tree.map(lambda *leaves: jnp.stack(leaves), *particles)
    return jax.vmap(step)(stacked)
