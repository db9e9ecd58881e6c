#!/usr/bin/env python3
"""rw-filter for a checkout or a Quarto project: ``pandoc --filter filters/rw-filter.py``.

A thin shim over the installed package (``pip install rwgate``): it exists so a project can name
the filter by path (Quarto: ``filters: [filters/rw-filter.py]``) without a console script on PATH.
"""

import sys
from pathlib import Path

try:
    from rwgate.runtime.launch import rw_filter as main
except ImportError:  # running from a source checkout that is not installed
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))
    from rwgate.runtime.launch import rw_filter as main

if __name__ == "__main__":
    sys.exit(main())
