"""`python -m mcpkit`: the same as the `mcpkit` command."""

import sys

from mcpkit.cli import main

sys.exit(main())
