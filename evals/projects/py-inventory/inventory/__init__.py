from .stock import Inventory

__all__ = ["Inventory"]
