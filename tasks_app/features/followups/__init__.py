"""People's follow-up messages to a task's agent: the service every surface calls
(``services``), the web form (``views``) and ``sf followup`` (``cli``)."""
