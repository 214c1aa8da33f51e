"""``python -m polignac_arena.cli``: the same as the ``polignac`` command."""

from polignac_arena.cli import main

main()
