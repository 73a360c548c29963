"""Settings to run the app on its own (``django-admin runserver --settings django_app.settings``)
or to test it. In a project, keep your own settings and include ``django_app.urls``.

The client reads the ``RECURRING_PAYMENTS_*`` environment variables (``Client.from_env()``):
set them, or a ``RECURRING_PAYMENTS`` dict (``BASE_URL``, ``PROFILE``, ``APP_NAME``,
``APP_SECRET``) here.
"""

import os

SECRET_KEY = os.environ.get("DJANGO_SECRET_KEY", "only-for-running-the-example")
DEBUG = os.environ.get("DJANGO_DEBUG") == "1"
ALLOWED_HOSTS = ["127.0.0.1", "localhost", "testserver"]
ROOT_URLCONF = "django_app.urls"
INSTALLED_APPS: list[str] = []
MIDDLEWARE: list[str] = []
USE_TZ = True
