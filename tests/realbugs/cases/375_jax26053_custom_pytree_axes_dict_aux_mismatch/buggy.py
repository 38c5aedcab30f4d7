import dataclasses

import jax
import jax.numpy as jnp


def main():
    @dataclasses.dataclass
    class Batch:
        a: jax.Array
        b: int

    # flattened through a dict: the dict's structure becomes the node's aux data
    jax.tree_util.register_pytree_node(
        Batch,
        lambda obj: jax.tree.flatten({"a": obj.a, "b": obj.b}),
        lambda aux, flat: Batch(**jax.tree.unflatten(aux, flat)),
    )
    batch = Batch(a=jnp.array([1.0, 2.0, 3.0]), b=2)
    axes = jax.tree.map(lambda _: 0, batch)
    axes.b = None
    fn = jax.vmap(lambda x: x.a + x.b, in_axes=(axes,))
    return fn(batch)
