"""The ``distsm`` command: ``count``, ``match``, ``info``, ``sparql``, ``partition``, ``jobqueue`` and ``warmup``
(:mod:`.parser` its options, :mod:`.inputs` its files, :mod:`.count_command` and :mod:`.commands` the commands).

Errors in the user's input (unreadable files, bad options, an unreachable cluster) are printed as one line on
stderr with exit code 2; nothing the user typed produces a traceback.
"""

from __future__ import annotations

import os
import sys

from distsm.cli.commands import run_info, run_jobqueue, run_match, run_partition, run_sparql, run_warmup
from distsm.cli.count_command import run_count
from distsm.cli.errors import CommandError, UsageError, one_line
from distsm.cli.parser import build_parser, parse_bytes
from distsm.errors import BackendUnavailableError, GraphError, GraphFormatError

__all__ = ["build_parser", "main", "parse_bytes"]


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    handler = {"count": run_count, "match": run_match, "info": run_info, "partition": run_partition,
               "sparql": run_sparql, "warmup": run_warmup, "jobqueue": run_jobqueue}[args.command]
    try:
        return handler(args)
    except UsageError as e:
        parser.error(str(e))
    except BrokenPipeError:
        # The reader went away (e.g. `| head`): stop quietly, as Unix tools do.
        sys.stdout = open(os.devnull, "w")
        return 0
    except (GraphFormatError, GraphError, BackendUnavailableError, ValueError, OSError, CommandError) as e:
        print(f"distsm: error: {one_line(e)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("distsm: interrupted", file=sys.stderr)
        return 130
    return 0
