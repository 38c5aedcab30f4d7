"""Foundation and parsing: JAX facts, values and errors; dims, axes, signatures'
specs and arguments; the derivation steps and their rendering. Imports nothing above it."""
