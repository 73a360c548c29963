"""``python -m recurring_payments.cli``: the same as ``python -m recurring_payments``."""

from . import main

raise SystemExit(main())
