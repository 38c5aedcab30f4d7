"""Helpers for axischeck's wrappers of libraries' own transforms (`axischeck.eqx`, ...)."""
