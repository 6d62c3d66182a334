"""Restore: put files back as a snapshot had them, with a safety snapshot that undoes it (service, apply, tools, commands)."""
