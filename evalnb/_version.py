"""evalnb's version, in a module of its own: setuptools reads the assignment without importing the package, and
modules below every layer (the package data's cache folder) name it without importing ``evalnb`` itself."""

__version__ = "0.1.0"
