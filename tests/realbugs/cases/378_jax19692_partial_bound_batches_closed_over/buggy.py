from functools import partial

import jax
import jax.numpy as jnp


def foo(a, b, c):
    return a + b * c


def bar(b, c):
    # the Callable[[Array], Array] form the rest of the code expects
    return partial(foo, b=b, c=c)


def main():
    a = jnp.arange(4.0)
    b = jnp.arange(4.0) * 10.0
    c = jnp.array([1.0, 2.0, 3.0, 4.0])
    # meant: one (a[i], b[i], c[i]) triple per mapped call
    return jax.vmap(bar(b, c))(a)
