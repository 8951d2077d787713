"""Accept or reject a skill SF proposed: two POST actions, back to the page they came
from (the skills pages show the proposals and post here; the CSRF header is on
``<body>`` for htmx, and a plain form carries ``{% csrf_token %}``)."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.urls import reverse
from django.utils.html import format_html
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_POST
from django_htmx.http import HttpResponseClientRedirect

from agents_app.access import Action, require
from sf_core.actors import Actor
from sf_core.errors import SfError
from sf_core.http import AuthedRequest
from skills_app.models import SkillProposal
from tasks_app.features.skills.proposals import proposal_accept, proposal_reject
from tasks_app.models.evidence import proposal_task

DECISIONS = {"accept": proposal_accept, "reject": proposal_reject}


@require_POST
@login_required
def proposal_accept_view(request: AuthedRequest, proposal_id: int) -> HttpResponse:
    """**Accept**: a task writes the skill (gate → verify → review → merge)."""
    return _decide(request, proposal_id, "accept")


@require_POST
@login_required
def proposal_reject_view(request: AuthedRequest, proposal_id: int) -> HttpResponse:
    """**Reject**: the same evidence is never proposed again."""
    return _decide(request, proposal_id, "reject")


def _decide(request: AuthedRequest, proposal_id: int, decision: str) -> HttpResponse:
    proposal = get_object_or_404(SkillProposal.objects.select_related("project"), pk=proposal_id)
    require(request.user, proposal.project, Action.VIEW)  # 403 on the action, not a 404
    try:
        proposal = DECISIONS[decision](proposal=proposal, actor=Actor.of(request.user))
    except SfError as exc:
        if request.htmx:
            # 200, so htmx swaps the message in beside the buttons (it drops 4xx bodies).
            return HttpResponse(format_html('<p class="error" role="alert">{}</p>', exc))
        return HttpResponse(str(exc), status=exc.status_code, content_type="text/plain")
    target = _back(request, proposal)
    return HttpResponseClientRedirect(target) if request.htmx else redirect(target)


def _back(request: AuthedRequest, proposal: SkillProposal) -> str:
    """The referring page when it is ours; else the board of the task that writes it."""
    referrer = request.headers.get("referer", "")
    if referrer and url_has_allowed_host_and_scheme(
        referrer, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return referrer
    task = proposal_task(proposal)
    if task is not None:
        return f"{reverse('task-board')}?session={task.plan.session_id}"
    return reverse("task-board")
