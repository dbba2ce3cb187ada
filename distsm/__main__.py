"""``python -m distsm`` runs the command-line interface."""

from distsm.cli import main

raise SystemExit(main())
