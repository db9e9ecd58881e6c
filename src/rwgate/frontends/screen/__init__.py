"""``rwgate screen``: the integrity rules of ``rwgate check``, applied to a whole corpus, by
DuckDB embedded or by Spark, with one SQL text (:mod:`.sql`)."""
