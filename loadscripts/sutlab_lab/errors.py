"""The one error of the tooling."""


class RunError(Exception):
    """Something failed to run (a load generator, a server, a check of what it answered): the
    commands print it on stderr and exit 1."""
