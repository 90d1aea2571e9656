import unittest

from inventory import Inventory


class InventoryTest(unittest.TestCase):
    def test_add_and_count(self):
        stock = Inventory()
        stock.add("apple", 3)
        stock.add("apple", 2)
        self.assertEqual(stock.count("apple"), 5)

    def test_remove(self):
        stock = Inventory()
        stock.add("pear", 4)
        stock.remove("pear", 1)
        self.assertEqual(stock.count("pear"), 3)

    def test_cannot_remove_more_than_in_stock(self):
        stock = Inventory()
        stock.add("plum", 1)
        with self.assertRaises(ValueError):
            stock.remove("plum", 2)
        self.assertEqual(stock.count("plum"), 1)


if __name__ == "__main__":
    unittest.main()
