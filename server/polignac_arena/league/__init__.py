"""The league server: authors upload bots or connect them from their own machines, and a ladder rates them."""
