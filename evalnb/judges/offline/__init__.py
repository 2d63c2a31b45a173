"""The offline judges."""
