"""``python -m rwgate``: the same as the ``rwgate`` command (the LaTeX hooks call it this way,
with ``-P`` so that nothing in the document's folder can stand in for a module)."""

import sys

from rwgate.runtime.launch import rwgate

sys.exit(rwgate())
