"""Backplane from Python: load tensor-backend plugins and call their ops."""

from backplane._backplane import version

__all__ = ["version"]
__version__ = version()
