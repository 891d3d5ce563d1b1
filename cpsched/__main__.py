"""``python -m cpsched``: the command line."""

import sys

from cpsched.cli import main

if __name__ == "__main__":
    sys.exit(main())
