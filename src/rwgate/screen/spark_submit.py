"""The file ``spark-submit`` runs for ``rwgate screen --engine spark`` on a cluster.

``spark-submit`` starts a Python file, not a console script, and hands it the cluster it chose
(``--master``, executors, memory); this file runs ``rwgate screen`` with the arguments after it,
in this process (never a resident worker), so the Spark session is the one ``spark-submit``
configured::

    spark-submit --master spark://host:7077 "$(python -m rwgate.screen.spark_submit --path)" \\
        '/shared/coci/*.csv' --out /shared/screen
"""

from __future__ import annotations

import sys


def main(argv: list[str]) -> int:
    """``--path``: where this file is (for the ``spark-submit`` line); else screen on Spark."""
    if argv[:1] == ["--path"]:
        print(__file__)
        return 0
    from rwgate.cli import main as cli_main

    engine = [] if "--engine" in argv else ["--engine", "spark"]
    return cli_main(["screen", *argv, *engine])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
