# knitr::knit() with nothing run: the Markdown knitr writes for a source, its code chunks echoed
# but never evaluated, inline code replaced by nothing. Used by test_knitr_differential.py as
# the reference reading of a .Rmd/.qmd. Chunk options are still parsed (they are R
# expressions): run it only on the reviewed fixtures in tests/fixtures/knitr.
args <- commandArgs(trailingOnly = TRUE)
library(knitr)
# bookdown's theorem and proof engines write their text as Markdown, as asis does.
# block and block2 (fenced divs under rmarkdown) write theirs the same way.
prose <- c("block", "block2", "theorem", "lemma", "corollary", "proposition", "conjecture", "definition",
           "example", "exercise", "hypothesis", "proof", "remark", "solution")
for (name in prose) knit_engines$set(setNames(list(knit_engines$get("asis")), name))
keep <- c("asis", prose)
opts_chunk$set(eval = FALSE)
opts_hooks$set(eval = function(options) {
  options$eval <- tolower(options$engine) %in% keep
  options
})
opts_hooks$set(tidy = function(options) {
  options$tidy <- FALSE
  options
})
opts_hooks$set(child = function(options) {
  options$child <- NULL
  options
})
knit_hooks$set(evaluate.inline = function(code, envir) "")
knit(args[[1]], output = args[[2]], quiet = TRUE, envir = new.env())
