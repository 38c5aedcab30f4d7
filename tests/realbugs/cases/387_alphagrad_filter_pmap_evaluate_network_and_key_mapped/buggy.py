import equinox as eqx
import jax
import jax.numpy as jnp


def interaction(network, games):
    # score every vertex of every game with the network: (games, vertices)
    return jax.vmap(jax.vmap(network))(games)[..., 0]


def evaluate(network, env_interaction_fn, key, games):
    device_key = jax.random.fold_in(key, jax.lax.axis_index("num_devices"))
    noisy_games = games + 0.01 * jax.random.uniform(device_key, games.shape)
    output = env_interaction_fn(network, noisy_games)
    rewards = output.sum(axis=-1)
    orders = jnp.argsort(output, axis=-1)
    return rewards, orders


def main():
    network = eqx.nn.Linear(4, 1, key=jax.random.PRNGKey(0))
    key = jax.random.PRNGKey(1)
    # the games of one benchmark batch, split over the devices: (devices, games, vertices, features)
    games = jnp.linspace(-1.0, 1.0, 8 * 2 * 3 * 4).reshape(8, 2, 3, 4)
    rewards, orders = eqx.filter_pmap(evaluate, axis_name="num_devices")(network, interaction, key, games)
    return rewards, orders
