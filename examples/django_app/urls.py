"""The app's URLs (include them from your project's ``urls.py``)."""

from django.urls import path

from . import views

urlpatterns = [
    path("onboarding/", views.start, name="onboarding-start"),
    path("orders/<str:order_id>/", views.order, name="order"),
    path("notifications/", views.notification, name="notification"),
]
