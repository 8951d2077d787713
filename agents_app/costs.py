"""Prices: which models litellm can price, and the configured models nobody prices.

A call to a model litellm has no price for (a self-hosted one) costs $0 unless the
project's policy names a price per token (``prices``); such calls are recorded
unpriced in the ledger (``ModelCall.priced``). The session page lists them, and
``manage.py check`` warns of every configured model that would be (``sf.W005``).
"""

from __future__ import annotations

import importlib.util
import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from django.conf import settings

from agents_app.models import AgentSession, ModelCall, Project
from agents_app.runtime.model_settings import MODES

PRICE_FILE = "model_prices_and_context_window_backup.json"  # shipped inside litellm
REPLAY_PREFIX = "replay/"  # a replayed trace's calls carry their recorded cost


@cache
def _litellm_prices() -> frozenset[str]:
    """The names litellm prices, read from the table it ships (importing litellm takes
    seconds: too slow for a system check that runs with every management command)."""
    spec = importlib.util.find_spec("litellm")
    if spec is None or not spec.submodule_search_locations:
        return frozenset()
    path = Path(next(iter(spec.submodule_search_locations))) / PRICE_FILE
    try:
        table = json.loads(path.read_text())
    except (OSError, ValueError):
        return frozenset()
    return frozenset(name for name, entry in table.items() if "input_cost_per_token" in entry)


def price_known(model: str) -> bool:
    """Whether litellm prices ``model`` (``openai/gpt-4o`` is priced as ``gpt-4o``)."""
    if model.startswith(REPLAY_PREFIX):
        return True
    known = _litellm_prices()
    return model in known or model.split("/", 1)[-1] in known


def unpriced_models(session: AgentSession) -> list[str]:
    """The models this session called that had no price: their calls were charged $0."""
    calls = ModelCall.objects.filter(session=session, priced=False)
    return sorted(set(calls.values_list("model", flat=True)))


@dataclass(frozen=True)
class Unpriced:
    model: str
    where: str  # "the environment (SF_MODEL_SMART)" or "project NAME (models.smart)"


def configured_unpriced(projects: list[Project]) -> list[Unpriced]:
    """Configured models without a price, each once with every place that configures
    it (one local model behind all three modes is one warning, not three): the
    environment's, unless some project prices them, and each project's own model
    settings, unless that project prices them."""
    priced_somewhere = {model for p in projects for model in p.parsed_policy.prices}
    places: dict[str, list[str]] = {}
    for mode in MODES:
        model = str(getattr(settings, f"SF_MODEL_{mode.upper()}", "") or "")
        if model and not price_known(model) and model not in priced_somewhere:
            places.setdefault(model, []).append(f"SF_MODEL_{mode.upper()}")
    found = {model: [f"the environment ({', '.join(names)})"] for model, names in places.items()}
    for project in projects:
        policy = project.parsed_policy
        modes: dict[str, list[str]] = {}
        for mode, override in policy.models.items():
            model = override.model or ""
            if model and not price_known(model) and model not in policy.prices:
                modes.setdefault(model, []).append(f"models.{mode}")
        for model, names in modes.items():
            found.setdefault(model, []).append(f"project {project.name} ({', '.join(names)})")
    return [Unpriced(model, "; ".join(where)) for model, where in found.items()]
