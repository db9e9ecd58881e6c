"""From what the sources said to one verdict per work, and what is remembered of it."""
