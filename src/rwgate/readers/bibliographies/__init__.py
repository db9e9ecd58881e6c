"""Bibliography files (BibTeX, CSL JSON/YAML, RIS, DOI lists) -> references."""
