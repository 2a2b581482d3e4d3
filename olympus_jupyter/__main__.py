"""``python -m olympus_jupyter``: the command line (see :mod:`olympus_jupyter.frontends.cli`)."""

import sys

from olympus_jupyter.frontends.cli import main

if __name__ == "__main__":
    sys.exit(main())
