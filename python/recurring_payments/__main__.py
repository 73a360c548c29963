"""``python -m recurring_payments``: see :mod:`recurring_payments.cli`."""

from .cli import main

raise SystemExit(main())
