"""The permission gate (DESIGN §5): every tool call an agent makes passes through it."""
