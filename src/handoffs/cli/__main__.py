"""`python -m handoffs.cli`: the same as the `handoffs` command."""

from . import main

raise SystemExit(main())
