"""``python -m pcpconform.conform.adapters.libpcp_cli --target NAME ...``: the libpcp adapters'
command (``libpcp.main``), a module of its own so that running it does not import the module
the package registry has already imported."""

import sys

from pcpconform.conform.adapters.libpcp import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
