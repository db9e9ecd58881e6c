"""Manuscripts and projects (Markdown, Quarto, R Markdown, pandoc ASTs) -> cited keys."""
