import jax
import jax.numpy as jnp
from flax import nnx


class CellularAutomaton(nnx.Module):
    def __init__(self, rngs: nnx.Rngs):
        self.perceive = nnx.Linear(3, 6, rngs=rngs)
        self.update = nnx.Linear(6, 3, rngs=rngs)

    def step(self, state):
        return state + 0.1 * self.update(jax.nn.relu(self.perceive(state)))

    def render(self, state):
        # one frame: the RGB colour of each of the cells, in [0, 1]
        return jax.nn.sigmoid(2.0 * state)


def main():
    ca = CellularAutomaton(nnx.Rngs(0))
    state = jnp.linspace(-1.0, 1.0, 5 * 3).reshape(5, 3)
    states = [state]
    for _ in range(3):
        states.append(ca.step(states[-1]))
    states = jnp.stack(states)  # (steps, cells, 3)
    frames = nnx.vmap(lambda ca, state: ca.render(state), in_axes=(None, 0))(ca, states)  # render each frame
    return frames
