"""One module per language, each defining one :class:`~code_trajectory.symbols.engine.TreeSitterLanguage` subclass.

Modules are imported on demand by :mod:`code_trajectory.symbols.registry`; each imports
only its own grammar package, and only when it first parses something.
"""
