"""The notification preferences page: channels, events, projects, a test, the log."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from notify_app.forms import PreferenceForm
from notify_app.models import Delivery
from notify_app.outbox import notification_test
from notify_app.recipients import preference_of
from notify_app.senders import SIGNATURE_HEADER, TIMESTAMP_HEADER
from notify_app.services import preference_save, preference_secret_rotate
from sf_core.http import AuthedRequest

RECENT = 20


@require_http_methods(["GET", "POST"])
@login_required
def preferences(request: AuthedRequest) -> HttpResponse:
    preference = preference_of(request.user)
    initial = {"kinds": preference.kinds}
    form = PreferenceForm(
        request.POST or None,
        instance=preference if preference.pk else None,
        initial=initial,
        user=request.user,
    )
    if request.method == "POST" and form.is_valid():
        preference_save(user=request.user, data=form.cleaned_data)
        messages.success(request, "Notification preferences saved.")
        return redirect("notify-preferences")
    context = {
        "form": form,
        "preference": preference,
        "deliveries": Delivery.objects.filter(user=request.user).select_related("notification")[
            :RECENT
        ],
        "signature_header": SIGNATURE_HEADER,
        "timestamp_header": TIMESTAMP_HEADER,
    }
    status = 400 if request.method == "POST" else 200
    return render(request, "notify_app/preferences.html", context, status=status)


@require_POST
@login_required
def send_test(request: AuthedRequest) -> HttpResponse:
    notification = notification_test(user=request.user)
    count = notification.deliveries.count()
    if count:
        messages.success(request, f"Test notification queued on {count} channel(s).")
    else:
        messages.warning(request, "No channel is on: tick email, browser or add a webhook.")
    return redirect("notify-preferences")


@require_POST
@login_required
def rotate_secret(request: AuthedRequest) -> HttpResponse:
    preference_secret_rotate(user=request.user)
    messages.success(request, "New webhook signing secret: update your receiver.")
    return redirect("notify-preferences")
