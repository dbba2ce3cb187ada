"""How the ``distsm`` command fails: usage errors and command errors, each one line on stderr with exit code 2."""

from __future__ import annotations

from distsm.errors import elide


class UsageError(Exception):
    """Options that do not go together: argparse's usage message, exit 2."""


class CommandError(Exception):
    """A problem outside the user's files (an unreachable cluster, say): one line, exit 2."""


def one_line(exc: BaseException) -> str:
    """The exception's message on one line, elided if huge (a message may quote the user's input)."""
    return elide(" ".join(str(exc).split()), 2000)
