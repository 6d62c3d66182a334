"""Answers a replay of real Go and TypeScript histories found wrong (spf13/pflag, 80 commits; sindresorhus/ky, 70
commits; through the MCP server): a symbol history's structured content without the checkpoint names and the move
note its headings say, Go's own spelling of a method, ``(*FlagSet).Parse``, not found, and a comparison's fields
without when and why each side was recorded; and, found probing TypeScript beside it, a class method's overload
signatures that were its class's text, not the method's. Real git in temp dirs."""

from __future__ import annotations

from pathlib import Path

from support import cli_stdout, write

FLAG_GO = """package pflag

type FlagSet struct {
\tparsed bool
}

// Parse parses flag definitions from the argument list.
func (f *FlagSet) Parse(arguments []string) error {
\tf.parsed = true
\treturn nil
}
"""


def _symbol_answer(project: Path, path: str, name: str):
    from code_trajectory.core.answer import structured
    from code_trajectory.core.config import TrajectorySettings
    from code_trajectory.history import service
    from code_trajectory.recording.session import ProjectSession

    session = ProjectSession(project, TrajectorySettings.load(project))
    session.start()
    try:
        answer = service.symbol_trajectory(session, path, name, depth=20, diffs=5)
        return str(answer), structured(answer, answer.data)
    finally:
        session.close()


def test_a_symbols_structured_versions_say_why_as_their_headings_do(project: Path) -> None:
    write(project, "flag.go", FLAG_GO)
    cli_stdout(project, "checkpoint", "-m", "29d09b8 add the flag set")
    write(project, "flag.go", FLAG_GO.replace("f.parsed = true", "f.parsed = true\n\tf.args = arguments"))
    cli_stdout(project, "checkpoint", "-m", "27b2eab allocate memory for arguments")
    parse = FLAG_GO[FLAG_GO.index("// Parse"):]
    write(project, "flag.go", FLAG_GO.replace(parse, ""))
    write(project, "parse.go", "package pflag\n\n" + parse.replace("f.parsed = true", "f.parsed = true\n\tf.args = arguments"))
    cli_stdout(project, "checkpoint", "-m", "b9035d0 each in its own file")

    text, data = _symbol_answer(project, "parse.go", "FlagSet.Parse")
    assert "checkpoint: 27b2eab allocate memory for arguments" in text and "(body unchanged)" in text, text
    versions = [dict(zip(data["cols"], row)) for row in data["versions"]]
    # a model reading only the fields (Claude Code) saw ids and times, never the checkpoint names the text gives
    assert [v.get("why") for v in versions] == [
        "checkpoint: 29d09b8 add the flag set", "checkpoint: 27b2eab allocate memory for arguments",
        "checkpoint: b9035d0 each in its own file"], versions
    moved = versions[-1]
    assert moved["what"] == "moved from flag.go (body unchanged)", moved


def test_a_go_method_is_found_as_gos_tools_spell_it(project: Path) -> None:
    write(project, "flag.go", FLAG_GO + "\nfunc Parse() {}\n")
    cli_stdout(project, "checkpoint", "-m", "start")
    write(project, "flag.go", FLAG_GO.replace("f.parsed = true", "f.parsed = true\n\tf.args = arguments")
          + "\nfunc Parse() {}\n")
    cli_stdout(project, "checkpoint", "-m", "allocate memory for arguments")
    # a stack trace's, pprof's or go doc's spelling was "no symbol ... did you mean FlagSet.Parse, Parse"
    for spelled in ("(*FlagSet).Parse", "(FlagSet).Parse", "github.com/spf13/pflag.(*FlagSet).Parse"):
        out = cli_stdout(project, "symbol", "flag.go", spelled)
        assert out.startswith("# Trajectory of `FlagSet.Parse` in `flag.go`") and "+\tf.args = arguments" in out, out


def test_compares_structured_content_says_when_and_why_each_side_was_recorded(project: Path) -> None:
    from code_trajectory.core.answer import structured
    from code_trajectory.core.config import TrajectorySettings
    from code_trajectory.history import service
    from code_trajectory.recording.session import ProjectSession

    write(project, "source/core/Ky.ts", "export class Ky {\n\tstatic create() {\n\t\treturn 1;\n\t}\n}\n")
    cli_stdout(project, "checkpoint", "-m", "4dd4077 Export the Input TypeScript type")
    write(project, "source/core/Ky.ts", "export class Ky {\n\tstatic create() {\n\t\treturn 2;\n\t}\n}\n")
    cli_stdout(project, "checkpoint", "-m", "974f1e9 Improve robustness of request construction")
    session = ProjectSession(project, TrajectorySettings.load(project))
    session.start()
    try:
        answer = service.compare(session, "4dd4077 Export the Input TypeScript type",
                                 "974f1e9 Improve robustness of request construction", "source/core/Ky.ts")
        data = structured(answer, answer.data)
    finally:
        session.close()
    assert "- From: " in answer and "· checkpoint: 4dd4077 Export the Input TypeScript type" in answer, answer
    # the fields held the two ids only: a model reading them (Claude Code) did not see which points it compared
    assert data is not None and "4dd4077 Export the Input TypeScript type" in data["from_why"], data
    assert "974f1e9 Improve robustness of request construction" in data["to_why"], data
    assert data["from_why"] in answer and data["to_why"] in answer


CLIENT_TS = """export class Client {
\t/** Fetches a resource. */
\tget(url: string): Promise<Response>;
\tget(url: URL): Promise<Response>;
\tget(url: string | URL): Promise<Response> {
\t\treturn fetch(url);
\t}

\tother(): void {}
}
"""


def test_a_changed_method_overload_signature_is_its_methods_change(project: Path) -> None:
    write(project, "src/client.ts", CLIENT_TS)
    cli_stdout(project, "checkpoint", "-m", "start")
    write(project, "src/client.ts", CLIENT_TS.replace("get(url: URL): Promise<Response>;",
                                                      "get(url: URL, init?: RequestInit): Promise<Response>;"))
    cli_stdout(project, "checkpoint", "-m", "accept an init")
    # it was "modified Client" (the class's text held the signatures) and Client.get's history had no such change
    assert "modified Client.get" in cli_stdout(project, "file", "src/client.ts")
    out = cli_stdout(project, "symbol", "src/client.ts", "Client.get")
    assert "1 change(s)" in out and "+\tget(url: URL, init?: RequestInit): Promise<Response>;" in out, out


def test_a_go_constant_is_named_in_the_log_and_its_history_found(project: Path) -> None:
    # replaying spf13/cobra: `var x = 1` -> `const x = 1` said "top-level code changed", and `symbol FILE x` found no
    # symbol; a constant of a Go, JavaScript, Rust or Ruby file is named and traced as a Python module's
    write(project, "c.go", "package c\n\nvar (\n\tTimeout = 5\n\tName    = \"x\"\n)\n\nfunc Run() {}\n")
    cli_stdout(project, "checkpoint", "-m", "v1")
    write(project, "c.go", "package c\n\nvar (\n\tTimeout = 10\n\tName    = \"x\"\n)\n\nfunc Run() {}\n")
    cli_stdout(project, "checkpoint", "-m", "v2")
    write(project, "c.go", "package c\n\nconst Timeout = 10\n\nvar Name = \"x\"\n\nfunc Run() {}\n")
    cli_stdout(project, "checkpoint", "-m", "v3")
    log = cli_stdout(project, "log", "--limit", "2")
    assert "M c.go (+1 -1): constant `Timeout` changed" in log and "M c.go (+3 -4): constant `Timeout` changed" in log, log
    assert "top-level code" not in log, log
    history = cli_stdout(project, "symbol", "c.go", "Timeout")
    assert history.count("modified") == 2 and "as first recorded" in history, history
    assert "+const Timeout = 10" in history, history
    write(project, "c.ts", "export const LIMIT = 1;\n")
    cli_stdout(project, "checkpoint", "-m", "ts v1")
    write(project, "c.ts", "export const LIMIT = 2;\n")
    cli_stdout(project, "checkpoint", "-m", "ts v2")
    assert "modified" in cli_stdout(project, "symbol", "c.ts", "LIMIT")
