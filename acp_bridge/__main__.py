"""`python -m acp_bridge` is `acp-bridge`."""

import sys

from acp_bridge.cli import main

if __name__ == "__main__":
    sys.exit(main())
