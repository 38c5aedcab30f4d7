from flax import nnx


@nnx.vmap(axis_size=3)
def create_hidden_layers(rngs: nnx.Rngs):
    return nnx.Linear(in_features=4, out_features=4, bias_init=nnx.initializers.ones, rngs=rngs)


def main():
    layers = create_hidden_layers(nnx.Rngs(0))
    return layers.kernel[...]
