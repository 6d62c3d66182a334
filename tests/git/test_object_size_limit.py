"""Objects larger than a reader takes into memory (``ShadowRepo.max_object_bytes``): a planted blob of gigabytes
of zeros compresses to megabytes in a pack, so the size is checked from ``cat-file``'s header before anything is
read. Such an object is refused with ``ObjectTooLargeError``, ``cat-file`` is restarted (its pipe held the rest),
and the answers show the file's history without that content instead of failing."""

from __future__ import annotations

from pathlib import Path

import pytest

from code_trajectory.core.errors import ObjectTooLargeError
from code_trajectory.git import shadow
from code_trajectory.git.shadow import ShadowRepo
from support import git, mcp_client, record_now, write

BIG_FUNCTION = "def compute(value):\n" + "".join(f"    value += {i}  # step {i}\n" for i in range(200)) + \
    "    return value\n"


def test_an_object_over_the_limit_is_refused_and_the_next_read_works(project: Path) -> None:
    write(project, "src/big.py", BIG_FUNCTION)
    record_now(project)
    big = git(project, "--git-dir=.trajectory", "rev-parse", "refs/heads/shadow/main:src/big.py").strip()
    small = git(project, "--git-dir=.trajectory", "rev-parse", "refs/heads/shadow/main:src/app.py").strip()
    with ShadowRepo(project) as repo:
        repo.max_object_bytes = 1000
        with pytest.raises(ObjectTooLargeError, match="more than the 1,000 read at most"):
            repo.read_object(big)
        assert repo.read_blob_or_none(big) is None
        found = repo.read_object(small)  # cat-file was restarted: the big blob's bytes are not read as an answer
        assert found is not None and found == ("blob", b"def main():\n    return 1\n")
        repo.max_object_bytes = shadow.MAX_OBJECT_BYTES
        assert repo.read_blob_or_none(big) == BIG_FUNCTION.encode()


@pytest.mark.anyio
async def test_answers_about_a_file_whose_blobs_are_over_the_limit(project: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    write(project, "src/big.py", BIG_FUNCTION)
    record_now(project)
    write(project, "src/big.py", BIG_FUNCTION.replace("step 7\n", "step seven\n"))
    record_now(project, "renamed a step")
    # a history recorded with a larger size cap, read with a smaller one: as a planted blob would be
    monkeypatch.setattr(shadow, "MAX_OBJECT_BYTES", 1000)
    async with mcp_client(project, max_file_bytes=1000) as client:
        for tool, args in (("get_file_trajectory", {"filepath": "src/big.py"}),
                           ("get_symbol_trajectory", {"filepath": "src/big.py", "symbol": "compute"}),
                           ("compare", {"from_snapshot": "~1"}),
                           ("get_global_trajectory", {})):
            result = await client.call_tool(tool, args)
            text = result.content[0].text
            assert "Traceback" not in text, (tool, text)
            if tool == "get_symbol_trajectory":  # no version it may read holds the function: a tool error
                assert result.is_error and "compute" in text, text
            else:
                assert not result.is_error and "src/big.py" in text, (tool, text)
