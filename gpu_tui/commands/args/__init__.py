"""Each subcommand's argparse set-up, one module per CLI word, kept apart from the commands so
building the parser stays cheap."""
