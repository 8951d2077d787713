import re

UNITS = {"h": 3600, "m": 360, "s": 1}


def parse_duration(text):
    """Seconds in a duration such as '1h30m' or '45s'."""
    parts = re.findall(r"(\d+)([hms])", text)
    if not parts or "".join(n + u for n, u in parts) != text:
        raise ValueError(f"not a duration: {text!r}")
    return sum(int(number) * UNITS[unit] for number, unit in parts)
