"""``rwgate``: the command line and its subcommands."""
