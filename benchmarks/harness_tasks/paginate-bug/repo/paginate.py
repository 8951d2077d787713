def page(items, number, size=10):
    """Page ``number`` (counted from 1) of ``items``, ``size`` items a page."""
    start = number * size
    return items[start : start + size]


def page_count(items, size=10):
    return (len(items) + size - 1) // size
