"""A Django app that starts the mandate signature of a customer (``views.py``), and verifies
the notifications the API posts. It needs only ``pip install recurring-payments django``:
copy this folder beside your project's ``manage.py`` (or anywhere on the Python path), then
add ``path("", include("django_app.urls"))`` to your URLs. To run it on its own against the
sandbox, from the folder that holds ``django_app/``::

    python -m recurring_payments serve --demo      # in one terminal: prints export lines
    # in another, paste those export lines, then:
    django-admin runserver --pythonpath . --settings django_app.settings

Its tests with the pytest plugin's sandbox: the Django part of docs/guides/notifications.md.
"""
