"""litellm, imported on first use (4 to 5 s) and set up once for SF.

Every module that calls litellm gets it from ``litellm_module()``: litellm's price map
is read from the installed package, never fetched from the internet, and its debug
prints (the red "Provider List" lines it writes to stdout whenever a model name has no
provider prefix, e.g. while SF asks whether a model is in its table) are off: SF
handles and reports those failures itself.
"""

from __future__ import annotations

import os
from typing import Any


def litellm_module() -> Any:
    """The litellm module, with SF's settings applied."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    litellm.suppress_debug_info = True
    return litellm
