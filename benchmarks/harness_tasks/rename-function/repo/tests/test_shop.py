from shop.cart import Cart
from shop.pricing import calc_total


def test_calc_total():
    assert calc_total([1.0, 2.5], tax_rate=0.1) == 3.85


def test_cart_total():
    cart = Cart()
    cart.add(2.0)
    assert cart.total() == 2.0
