# knitr::knit() of rwgate's own rule-3 fixtures (tests/fixtures/knitr-rule3), chunks evaluated so
# that figures, their captions and child documents are written as knitr writes them. It runs the
# fixtures' code (plot() calls): run it only on those reviewed files. PDF figures: no display.
args <- commandArgs(trailingOnly = TRUE)
library(knitr)
opts_chunk$set(dev = "pdf", fig.path = file.path(dirname(args[[2]]), "figure-"))
knit(args[[1]], output = args[[2]], quiet = TRUE, envir = new.env())
