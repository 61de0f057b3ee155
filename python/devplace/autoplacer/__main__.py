"""`python -m devplace.autoplacer WORKLOAD.json ...`: see `command.main`."""

import sys

from devplace.autoplacer.command import main

sys.exit(main())
