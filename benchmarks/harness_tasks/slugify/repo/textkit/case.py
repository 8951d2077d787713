"""Small helpers for changing the case of text."""


def title_case(text):
    """Capitalise the first letter of every word."""
    return " ".join(word[:1].upper() + word[1:] for word in text.split())
