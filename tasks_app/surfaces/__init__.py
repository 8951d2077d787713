"""tasks_app's surfaces: pages, live consumers and the CLI. They parse, call the
domain, the engine and the features, and render; nothing below imports them."""
