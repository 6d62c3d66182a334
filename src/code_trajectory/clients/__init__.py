"""One-command set-up of MCP clients: ``code-trajectory install|uninstall CLIENT``.

Modules: :mod:`.base` (the client protocol, which entries are ours), one module per client
(:mod:`.claude_code`, :mod:`.claude_desktop`, :mod:`.cursor`, :mod:`.vscode`, :mod:`.gemini`, :mod:`.codex`,
:mod:`.windsurf`, :mod:`.zed`, :mod:`.cline`, :mod:`.continue_dev`, :mod:`.goose`), :mod:`.registry`,
:mod:`.userdirs` (per-user directories), :mod:`.jsonfile` (tolerant read, backup, atomic write, diff),
:mod:`.docfile` (TOML and YAML with the same guarantees), :mod:`.hooks` (Claude Code hooks),
:mod:`.install` (the API: ``install``, ``uninstall``, ``render``, ``Change``) and :mod:`.commands`
(the CLI glue).
"""
