"""The package version, on the ground floor so that any layer can record it without importing the public facade
(``distsm/__init__.py``, which imports the API)."""

__version__ = "0.1.0"
