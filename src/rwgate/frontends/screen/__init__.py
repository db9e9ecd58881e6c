"""``rwgate screen``: the integrity rules of ``rwgate check``, applied to a whole corpus.

Reference tables of 10^6 to 10^9 rows (OpenCitations, Crossref's public data file, a publisher's
own table) are joined against a verdict table that :func:`rwgate.core.check` computed for every
work the snapshot knows (:mod:`.verdicts`), by DuckDB embedded or by Spark, with one SQL text
(:mod:`.sql`, :mod:`.doisql`).
"""
