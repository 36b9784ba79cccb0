"""One module per ``ascendify`` subcommand (see :mod:`ascendify.cli` for the protocol)."""
