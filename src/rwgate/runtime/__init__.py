"""The resident worker: console scripts hand a run to a warm process, or run it here."""
