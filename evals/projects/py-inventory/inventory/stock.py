"""Stock levels per item."""


class Inventory:
    def __init__(self):
        self._counts = {}
        self._prices = {}

    def add(self, item, quantity, price=0):
        """Adds `quantity` of `item`; `price` is the unit price in cents."""
        if quantity <= 0:
            raise ValueError("quantity must be positive")
        self._counts[item] = self._counts.get(item, 0) + quantity
        self._prices[item] = price

    def remove(self, item, quantity):
        """Takes `quantity` of `item` out of stock."""
        self._counts[item] = self._counts.get(item, 0) - quantity

    def count(self, item):
        return self._counts.get(item, 0)

    def items(self):
        return sorted(self._counts)
