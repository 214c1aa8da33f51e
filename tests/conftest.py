"""Test-wide settings."""

# The hostile bots are programs to run inside sandboxes, not modules to import:
# --doctest-modules would start them.
collect_ignore_glob = ["hostile/bots/*"]
