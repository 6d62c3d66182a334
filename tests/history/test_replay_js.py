"""Answers a replay of a real JavaScript history found wrong (tj/commander.js, index.js as prototype methods, then
``class Command``, then lib/command.js; 128 commits through the CLI and the MCP server): converting
``Command.prototype.option = function`` into ``option() {}`` in ``class Command`` ended every method's history
(``removed``) and started a new one (``added``), and the file's heading listed each method twice, added and
removed. Real git in temp dirs."""

from __future__ import annotations

from pathlib import Path

from support import cli_stdout, write

PROTOTYPES = """function Command(name) {
  this._name = name;
}

Command.prototype.option = function(flags, description) {
  var self = this;
  return self._optionEx({}, flags, description);
};

Command.prototype.parse = function(argv) {
  return this._parseCommand([], argv);
};
"""

CLASS = """class Command {
  constructor(name) {
    this._name = name;
  }

  option(flags, description) {
    return this._optionEx({}, flags, description);
  };

  parse(argv) {
    return this._parseCommand([], argv);
  };
}
"""


def test_a_prototype_method_moved_into_its_class_keeps_its_history(project: Path) -> None:
    write(project, "index.js", PROTOTYPES)
    cli_stdout(project, "checkpoint", "-m", "first")
    write(project, "index.js", PROTOTYPES.replace("var self = this;\n  return self.", "return this."))
    cli_stdout(project, "checkpoint", "-m", "no self")
    write(project, "index.js", CLASS)
    cli_stdout(project, "checkpoint", "-m", "Convert Command from prototype to class")

    text = cli_stdout(project, "symbol", "index.js", "Command.option", "--diffs", "3")
    assert "renamed from Command.prototype.option · checkpoint: Convert Command from prototype to class" in text, text
    assert "modified · checkpoint: no self" in text, text  # its prototype days are its history
    old = cli_stdout(project, "symbol", "index.js", "Command.prototype.option")
    assert "renamed to Command.option" in old, old

    heading = cli_stdout(project, "file", "index.js", "--depth", "1")
    assert "renamed Command.prototype.* -> Command.* (option, parse)" in heading, heading
    assert "removed" not in heading and "added Command.option" not in heading, heading


ASSIGNED = """function AxiosHeaders(headers) {
  headers && this.set(headers);
}

Object.assign(AxiosHeaders.prototype, {
  set: function(header, valueOrRewrite, rewrite) {
    const self = this;
    return setHeader(self, header, valueOrRewrite, rewrite);
  },

  get: function(header, parser) {
    return findKey(this, header, parser);
  }
});

Object.assign(AxiosHeaders, {
  from: function(thing) {
    return thing instanceof this ? thing : new this(thing);
  }
});
"""

ASSIGNED_CLASS = """class AxiosHeaders {
  constructor(headers) {
    headers && this.set(headers);
  }

  set(header, valueOrRewrite, rewrite) {
    return setHeader(this, header, valueOrRewrite, rewrite);
  }

  get(header, parser) {
    return findKey(this, header, parser);
  }

  static from(thing) {
    return thing instanceof this ? thing : new this(thing);
  }
}
"""


def test_methods_object_assigned_to_a_prototype_are_its_methods(project: Path) -> None:
    """axios's lib/core/AxiosHeaders.js (ab77a40e): ``Object.assign(AxiosHeaders.prototype, {set: function})`` made
    ``class AxiosHeaders { set() {} }``; the members were named ``Object.assign.set`` and ``Object.assign.from`` (the
    call, not what it assigns to), so the class's methods were "added" and their history lost."""
    write(project, "AxiosHeaders.js", ASSIGNED)
    cli_stdout(project, "checkpoint", "-m", "first")
    write(project, "AxiosHeaders.js", ASSIGNED.replace("const self = this;\n    return setHeader(self", "return setHeader(this"))
    cli_stdout(project, "checkpoint", "-m", "no self")
    first = cli_stdout(project, "file", "AxiosHeaders.js", "--depth", "1")
    assert "- Symbols: modified AxiosHeaders.prototype.set\n" in first, first
    write(project, "AxiosHeaders.js", ASSIGNED_CLASS)
    cli_stdout(project, "checkpoint", "-m", "Fixed & Improved AxiosHeaders class")

    text = cli_stdout(project, "symbol", "AxiosHeaders.js", "AxiosHeaders.set")
    assert "renamed from AxiosHeaders.prototype.set · checkpoint: Fixed & Improved AxiosHeaders class" in text, text
    assert "modified · checkpoint: no self" in text, text
    static = cli_stdout(project, "symbol", "AxiosHeaders.js", "AxiosHeaders.from")
    assert "added" not in static and "checkpoint: first" in static, static  # the same name in both forms
    heading = cli_stdout(project, "file", "AxiosHeaders.js", "--depth", "1")
    assert "renamed AxiosHeaders.prototype.* -> AxiosHeaders.* (set, get)" in heading, heading
