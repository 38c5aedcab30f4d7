"""The engine: unification, transform levels, traces, meshes, the models, the fast
path, fixes, inferred signatures, and the predictor that caches it all for one function."""
