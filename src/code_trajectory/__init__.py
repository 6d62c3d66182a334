"""code-trajectory: a memory of how a codebase evolved and why, for coding agents.

The package is deliberately light to import: heavy dependencies (the MCP SDK,
watchfiles) are imported only by the modules that need them (``server``,
``watcher``), so the CLI's read-only commands start fast.
"""

__version__ = "0.1.0"
