"""Test status: test runs recorded against the snapshot they ran on.

A run says which command ran, whether it passed, the counts, how long it took,
which tests failed with a one-line reason each, and the tail of the output. It is
stored with the shadow commit it ran on, never in the project: as a git note under
``refs/notes/trajectory-tests`` in the shadow repository.

Modules: :mod:`.model` (the record), :mod:`.scope` (which tests a run ran, and how
scopes overlap), :mod:`.selection` (a command's scope), :mod:`.runner` (running a
command), :mod:`.parsers` (one module per runner's output format), :mod:`.store` (the
git notes), :mod:`.green` (when a snapshot is green, per scope), :mod:`.service`
(snapshot, run, record; an agent's report),
:mod:`.pytest_plugin`, and the front ends :mod:`.tools` (MCP) and :mod:`.commands`
(CLI). This ``__init__`` imports nothing, so the pytest plugin stays light.
"""

#: Most runs the test history lists (``get_test_history(limit=...)``), here so that the MCP tools can name it in
#: their schema without importing :mod:`.report`.
MAX_LIMIT = 1000

#: What the numeric arguments of the test status tools accept, ``(low, high)``: checked by :mod:`.report` and
#: :mod:`.service` and declared as ``minimum``/``maximum`` in the tools' input schemas, here for the same reason.
LIMIT_RANGE = (1, MAX_LIMIT)
#: A run's counts (passed, failed, errors, skipped, xfailed, xpassed).
COUNT_RANGE = (0, 10_000_000)
#: A run's wall time, seconds (a week at most).
DURATION_RANGE = (0, 7 * 24 * 3600)
#: A runner's exit status; negative for a signal (``-9``).
EXIT_CODE_RANGE = (-255, 255)

#: The environment variable that turns the pytest plugin on (``CODE_TRAJECTORY_PYTEST=1``), here so that the
#: runner (:mod:`.service`) can clear it for a run it records itself without importing the plugin.
PLUGIN_ENV_VAR = "CODE_TRAJECTORY_PYTEST"
