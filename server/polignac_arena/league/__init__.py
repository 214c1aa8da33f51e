"""The league: a long-running server where authors submit bots or connect them, and a ladder plays them for good."""
