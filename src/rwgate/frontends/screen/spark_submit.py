"""The file ``spark-submit`` runs for ``rwgate screen --engine spark`` on a cluster.

``spark-submit`` starts a Python file, not a console script, and hands it the cluster it chose
(``--master``, executors, memory); this file runs ``rwgate screen`` with the arguments after it,
in this process (never a resident worker), so the Spark session is the one ``spark-submit``
configured::

    spark-submit --master spark://host:7077 \\
        "$(python -m rwgate.frontends.screen.spark_submit --path)" \\
        '/shared/coci/*.csv' --out /shared/screen
"""

from __future__ import annotations

import sys


def main(argv: list[str]) -> int:
    """``--path``: where this file is (for the ``spark-submit`` line); else screen on Spark."""
    if argv[:1] == ["--path"]:
        print(__file__)
        return 0
    import argparse

    from rwgate.frontends.screen.command import add_screen_command

    parser = argparse.ArgumentParser(prog="rwgate")
    add_screen_command(parser.add_subparsers(dest="command", required=True))
    engine = [] if "--engine" in argv else ["--engine", "spark"]
    args = parser.parse_args(["screen", *argv, *engine])
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
