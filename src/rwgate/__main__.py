"""``python -m rwgate``: the same as the ``rwgate`` command (the LaTeX hooks call it this way)."""

import sys

from rwgate.cli import main

sys.exit(main())
