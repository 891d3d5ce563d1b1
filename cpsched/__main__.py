"""``python -m cpsched``: the command line (``cpsched.console``)."""

import sys

from cpsched.console import main

if __name__ == "__main__":
    sys.exit(main())
