"""Real loopback servers that stand in for upstream services in tests and benchmarks.

Import as ``from fakes.crossref import FakeCrossref`` (pytest puts ``tests/`` on ``sys.path``).
"""
