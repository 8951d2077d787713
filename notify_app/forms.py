from __future__ import annotations

from typing import Any

from django import forms
from django.contrib.auth.models import User

from agents_app.access import projects_visible
from notify_app.models import NotificationPreference
from sf_core.notices import LABELS, NoticeKind

KINDS = [(kind.value, LABELS[kind]) for kind in NoticeKind if kind != NoticeKind.TEST]


class PreferenceForm(forms.ModelForm):
    """Which channels, which events, which projects: nothing ticked means all of them."""

    webhook_url = forms.URLField(
        required=False,
        assume_scheme="https",
        label="Webhook URL",
        help_text="Slack-compatible incoming webhook; each request is signed (see below)",
    )
    kinds = forms.MultipleChoiceField(
        choices=KINDS, required=False, widget=forms.CheckboxSelectMultiple
    )

    class Meta:
        model = NotificationPreference
        fields = ["email", "browser", "webhook_url", "kinds", "projects"]
        widgets = {"projects": forms.CheckboxSelectMultiple}

    def __init__(self, *args: Any, user: User, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        projects = self.fields["projects"]
        assert isinstance(projects, forms.ModelMultipleChoiceField)
        projects.queryset = projects_visible(user)
        if not user.email:  # nothing to send to: not ticked, and it says why
            email = self.fields["email"]
            email.disabled = True
            email.help_text = "your account has no email address: ask an admin to set one"
            self.initial["email"] = False
