"""A job's whole-run series (issue 24): the summariser shipped to the instance, and reading it."""
