"""Sessions, the five-axis operating model, the agent runtime and the permission gate."""
