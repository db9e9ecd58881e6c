"""What the invoking user (and, for policy only, the document) chose: layered settings, paths,
policy."""
