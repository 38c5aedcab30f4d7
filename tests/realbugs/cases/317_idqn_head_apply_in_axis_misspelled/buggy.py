import jax
import jax.numpy as jnp


def q_network(params, state):
    # one Q-network head: a linear layer from the state to one value per action
    return state @ params["w"] + params["b"]


def main():
    # 4 stacked heads (4 x 3 states -> 2 actions); the first head is the online one
    params = {
        "w": jnp.linspace(-1.0, 1.0, 24).reshape(4, 3, 2),
        "b": jnp.array([[0.0, 0.1], [0.2, 0.3], [0.4, 0.5], [0.6, 0.7]]),
    }
    state = jnp.array([0.5, -1.0, 2.0])
    remaining_params = jax.tree_util.tree_map(lambda p: p[1:], params)
    return jax.vmap(q_network, in_axis=(0, None))(remaining_params, state)
