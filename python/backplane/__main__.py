"""python3 -m backplane: describes the Backplane host as bp-info does (see
backplane._info)."""

import sys

from backplane._info import main

sys.exit(main())
