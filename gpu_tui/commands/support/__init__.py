"""What the subcommands share: cell-width tables, --help layout, error lines and questions,
shipping notification targets first."""
