"""What the agent's tools and the shell commands the gate knows do.

``tools``: the tools and the profile each is offered from; ``families``: the command
families with their risk and floor; ``classify``: a command's family and path operands,
from one module per family of commands (``reading``, ``sed``, ``files``, ``git``,
``network``, ``packages``, ``interpreters``, ``system``) read with ``options``.
"""
