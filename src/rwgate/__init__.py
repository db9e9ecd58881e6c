"""rwgate: keeps retracted research out of manuscripts."""

__version__ = "0.1.0"
