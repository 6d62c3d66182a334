"""share: trajectories shared through the project's own git remote (push, pull, list, read).

``push`` sends the shadow branches to ``refs/trajectory/<author-id>/<branch>`` on the project's remote;
``pull`` fetches others' into ``refs/remotes-trajectory/<author-id>/<branch>``; named points, intent and test runs
travel beside each branch as data (:mod:`.data`); :mod:`.service` lists
the sources and maps a source name to the ref to read. Opt-in: nothing is pushed without the command
(or ``[share] auto_push = true``).
"""
