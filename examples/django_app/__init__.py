"""A Django app that starts the mandate signature of a customer (see ``views.py``)."""
