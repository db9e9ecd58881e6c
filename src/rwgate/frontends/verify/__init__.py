"""Citation verification for drafting: does a cited work exist, does its metadata match, and
what is its integrity status (see :mod:`rwgate.frontends.verify.verify`)."""
