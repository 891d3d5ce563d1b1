"""``python -m cpsched``: the command line."""

import sys

from cpsched.cli import main

sys.exit(main())
