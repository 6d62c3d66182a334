"""The journal: a git repository of markdown sections whose commit messages are journal entries.

Modules: :mod:`.settings` (the ``[journal]`` config table), :mod:`.store` (the
git-backed sections, ids and atomic writes), :mod:`.search` (semantic and
lexical search with temporal salience), :mod:`.embedding` (the offline
all-MiniLM-L6-v2 model, loaded lazily), :mod:`.sync` (sharing through a git
remote), :mod:`.service` (the operations shared by the MCP tools and the CLI).
Nothing heavy is imported here.
"""
