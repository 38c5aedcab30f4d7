import jax
import jax.numpy as jnp


def apply_heads(params, state):
    # every stacked Q-network head on one state: (heads, actions)
    return jnp.einsum("s,...sa->...a", state, params["w"]) + params["b"]


def loss(params, params_target, sample):
    # every online head regresses on the target of its own target head, for one transition
    max_next_q = jnp.max(apply_heads(params_target, sample["next_state"]), axis=-1)
    target = sample["reward"] + 0.9 * max_next_q
    q_value = apply_heads(params, sample["state"])[:, 0]
    return jnp.mean((q_value - target) ** 2)


def main():
    # 3 heads, states of size 2, 2 actions; a batch of 3 transitions
    params = {"w": jnp.linspace(-1.0, 1.0, 12).reshape(3, 2, 2), "b": jnp.zeros((3, 2))}
    params_target = {"w": jnp.linspace(1.0, -1.0, 12).reshape(3, 2, 2), "b": jnp.full((3, 2), 0.1)}
    samples = {
        "state": jnp.array([[0.0, 1.0], [1.0, 0.0], [0.5, 0.5]]),
        "next_state": jnp.array([[1.0, 1.0], [0.0, -1.0], [0.5, 0.0]]),
        "reward": jnp.array([1.0, 0.0, -1.0]),
    }
    losses = jax.vmap(loss, in_axes=(None, 0, 0))(params, params_target, samples)
    return losses.mean()
