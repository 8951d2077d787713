def days_in_month(year, month):
    """Days in ``month`` (1-12) of ``year``, ignoring leap years for now."""
    if month == 2:
        return 28
    return 30 if month in (4, 6, 9, 11) else 31
