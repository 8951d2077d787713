def word_count(text):
    """How many words ``text`` has, words being separated by any whitespace."""
    if not text:
        return 0
    return len(text.split(" "))
