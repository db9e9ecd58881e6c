"""The contract of DESIGN.md as code: models, vocabularies, DOI form, evidence rules."""
