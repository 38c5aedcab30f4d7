from flax import nnx

N = 4


@nnx.split_rngs(splits=N)
@nnx.vmap(in_axes=(0,), out_axes=0)
def make_model(rngs):
    return nnx.Linear(3, 3, rngs=rngs)


def main():
    ensemble = make_model(nnx.Rngs(7))
    return ensemble.kernel[...]
