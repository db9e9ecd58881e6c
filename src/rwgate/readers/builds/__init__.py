"""LaTeX builds: what .tex, .aux and .bbl files cite and print."""
