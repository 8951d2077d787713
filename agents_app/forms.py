"""Forms of the agents app (input parsing only; services do the work)."""

from __future__ import annotations

from django import forms

from agents_app.axes import NEW_SESSION_AXES, ModelMode, PermissionProfile, RunControl, WorkMode
from agents_app.schemas import RepairPolicy


class ProjectForm(forms.Form):
    name = forms.CharField(max_length=200)
    repo_path = forms.CharField(max_length=1000, label="Repository path")
    base_branch = forms.CharField(max_length=200, initial="main")
    repair_policy = forms.ChoiceField(
        choices=[(value.value, value.value) for value in RepairPolicy], initial="ask"
    )


class SessionForm(forms.Form):
    title = forms.CharField(max_length=300, required=False)
    # The one default of every creator (``NEW_SESSION_AXES``), preselected.
    work_mode = forms.ChoiceField(choices=WorkMode.choices, initial=NEW_SESSION_AXES["work_mode"])
    run_control = forms.ChoiceField(
        choices=RunControl.choices, initial=NEW_SESSION_AXES["run_control"]
    )
    permission_profile = forms.ChoiceField(
        choices=PermissionProfile.choices, initial=NEW_SESSION_AXES["permission_profile"]
    )
    model_mode = forms.ChoiceField(
        choices=ModelMode.choices, initial=NEW_SESSION_AXES["model_mode"]
    )


class CommandForm(forms.Form):
    text = forms.CharField(max_length=2000, strip=True)
