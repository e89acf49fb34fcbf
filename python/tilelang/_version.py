"""The package version (pyproject.toml has the same), importable without the package's other modules."""
__version__ = "0.1.0"
