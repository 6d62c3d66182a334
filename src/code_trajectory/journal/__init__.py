"""The journal: a git repository of markdown sections whose commit messages are journal entries.

Modules: :mod:`.settings` (the ``[journal]`` config table), :mod:`.store` (the
git-backed sections and atomic writes) on :mod:`.repository` (the git plumbing), :mod:`.text` and :mod:`.model` (ids, texts, records),
:mod:`.toc` (the table of contents), :mod:`.search` and :mod:`.scoring` (semantic and
lexical search with temporal salience), :mod:`.embedding` (the offline
all-MiniLM-L6-v2 model, loaded lazily), :mod:`.sync` (sharing through a git
remote), :mod:`.service` (the operations shared by the front ends :mod:`.tools` (MCP) and
:mod:`.commands` (CLI)).
Nothing heavy is imported here.

Store
-----
Layout (as in ``journal-design.md``)::

    <journal>/
    ├── project-alpha.md              overview of section "project-alpha"
    ├── project-beta/api-design.md    overview of section "project-beta/api-design"
    └── .git/                         history: one commit per journal entry

Identifiers: ``project-alpha`` is the section (its current overview, the file
without the ``<!-- entry count: N -->`` comment); ``project-alpha#<sha>`` is one
journal entry, the message of a commit touching ``project-alpha.md``. Ids carry
the first 12 hex digits of the sha; any unique prefix of 4 or more digits is
accepted back.

Every write is one commit made with plumbing (``hash-object``, a temporary
index, ``write-tree``, ``commit-tree``) and published with a compare-and-swap
``update-ref HEAD <new> <old>``, all under an inter-process file lock in the
git directory. So two servers (or a server and the CLI) writing to one journal
serialise, and even a writer that ignores the lock (plain git, a sync) cannot
make us lose an entry: a lost CAS race is retried on the new head. The entry
count in the file is recomputed from history on every write ("resolve by
counting actual commits"), so it never conflicts for long.

Reads come from the committed objects (``HEAD``), never from the work tree; the
work tree is refreshed after each write for people who browse the files, and
a local edit there is left alone (and not read) rather than overwritten.

A section's *version* is the sha of the last commit that changed its file: the
write protection of the MCP tools compares it (see :meth:`JournalStore.write`).
"""

#: What the numeric arguments of the journal tools accept, ``(low, high)``: checked by :mod:`.toc`, :mod:`.store` and
#: :mod:`.search` and declared as ``minimum``/``maximum`` in the tools' input schemas (here, so the tools need not
#: import those modules). ``journal_toc(depth=...)``:
TOC_DEPTH_RANGE = (1, 50)
#: ``journal_list_entries(start=...)``, the index of the first entry (0: the newest); the top is the largest
#: ``git log --skip`` takes (a C ``int``).
LIST_START_RANGE = (0, 2**31 - 1)
#: ``journal_list_entries(length=...)``.
LIST_LENGTH_RANGE = (1, 1000)
#: ``journal_search(salience_threshold=...)``, a score.
SALIENCE_RANGE = (0.0, 1.0)
