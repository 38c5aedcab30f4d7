import equinox as eqx
import jax
import jax.numpy as jnp


def tree_search(graph, model, key):
    # one device's rollouts on the whole graph (vertices, features), with its own key
    noisy = graph + 0.1 * jax.random.normal(key, graph.shape)
    logits = jax.vmap(model)(noisy.reshape(-1, 4))
    return jnp.max(logits, axis=-1).sum()


def main():
    model = eqx.nn.Linear(4, 3, key=jax.random.PRNGKey(0))
    graph = jnp.linspace(-1.0, 1.0, 8 * 4).reshape(8, 4)  # 8 vertices, 4 features
    data_keys = jax.random.split(jax.random.PRNGKey(1), 8)  # one key per device
    search = eqx.filter_pmap(tree_search, in_axes=(0, None, 0), axis_name="num_devices")
    return search(graph, model, data_keys)
