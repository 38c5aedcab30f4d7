import equinox as eqx
import jax
import jax.numpy as jnp


def make_experts():
    @eqx.filter_vmap
    def make(key):
        return eqx.nn.MLP(3, 2, width_size=4, depth=1, key=key)

    return make(jax.random.split(jax.random.key(0), 4))


def apply_expert(expert, x):
    return expert(x)


def main():
    experts = make_experts()
    x = jnp.arange(3.0) / 3.0
    gate = jax.nn.softmax(jnp.arange(4.0))
    outs = eqx.filter_vmap(apply_expert, in_axes=(0, None))(experts, x)
    return jnp.einsum("nd,n->d", outs, gate)
