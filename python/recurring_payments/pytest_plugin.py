"""pytest plugin of recurring_payments: fixtures for the sandbox server (see testing.py)."""
