"""The league: one long-running server that authors reach over the network (docs/protocol.md, "Remote bots")."""
