"""`python -m devplace.autoplace WORKLOAD.json ...`: see `command.main`."""

import sys

from devplace.autoplace.command import main

sys.exit(main())
