import equinox as eqx
import jax
import jax.numpy as jnp


class Flow(eqx.Module):
    linear: eqx.nn.Linear

    def __init__(self, key):
        self.linear = eqx.nn.Linear(2, 2, key=key)

    def sample_flow(self, *, key):
        # one sample pushed through the flow, recorded at 3 snapshot times: (snapshots, 2)
        z = jax.random.normal(key, (2,))
        snapshots = [z]
        for _ in range(2):
            for _ in range(4):
                z = z + 0.125 * jnp.tanh(self.linear(z))
            snapshots.append(z)
        return jnp.stack(snapshots)


def main():
    model = Flow(jax.random.PRNGKey(0))
    sample_key = jax.random.split(jax.random.PRNGKey(1), 5)
    sample_flows = jax.vmap(model.sample_flow, out_axes=-1)(key=sample_key)
    # one scatter plot per snapshot: the x and y coordinates of every sample
    return {"x": sample_flows[:, 0], "y": sample_flows[:, 1]}
