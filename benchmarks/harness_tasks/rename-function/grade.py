"""Hidden grader of the rename-function task: run in a copy of the final state."""

from _grading import check_python, finish, no_word, pytest_passes

results = [
    check_python(
        "from shop.pricing import total_price\n"
        "from shop.cart import Cart\n"
        "assert total_price([1.0, 2.5], tax_rate=0.1) == 3.85\n"
        "cart = Cart(); cart.add(1.5); cart.add(1.0)\n"
        "assert cart.total() == 2.5\n"
    ),
    no_word("calc_total"),
    pytest_passes(),
]
finish(results)
