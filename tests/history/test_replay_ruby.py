"""What a replay of rack's ``lib/rack/utils.rb`` (107 versions, 2015-2020) found in Ruby symbol histories, each on a
small file shaped as rack's was. Real git, the CLI as a subprocess."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from support import cli_stdout, subprocess_env, write

#: Rack::Utils as of rack 2.1: ``clock_time`` defined twice, under ``if``/``else``.
UTILS = '''module Rack
  module Utils
    module_function

    if defined?(Process::CLOCK_MONOTONIC)
      def clock_time
        Process.clock_gettime(Process::CLOCK_MONOTONIC)
      end
    else
      def clock_time
        Time.now.to_f
      end
    end
  end
end
'''


def headings(text: str) -> list[str]:
    """The heading of each version of a trajectory (``## `` lines), oldest first."""
    return re.findall(r"^## .*$", text, re.M)


def test_a_doc_comment_added_above_the_second_definition_of_a_name_is_in_its_history(project: Path) -> None:
    """rack's "More covering tests" put ``# :nocov:`` above the ``else`` branch's ``def clock_time``: the file
    history said "doc comment of 2nd definition of `Rack::Utils#clock_time` added", its symbol history had no such
    version (a repeated name's version counted only when its own lines changed)."""
    write(project, "lib/utils.rb", UTILS)
    cli_stdout(project, "checkpoint")
    write(project, "lib/utils.rb", UTILS.replace("    else\n      def clock_time\n        Time.now.to_f\n      end\n",
                                                 "    else\n      # :nocov:\n      def clock_time\n"
                                                 "        Time.now.to_f\n      end\n      # :nocov:\n"))
    cli_stdout(project, "checkpoint", "-m", "More covering tests")
    assert "doc comment of 2nd definition of `Rack::Utils#clock_time` added" in cli_stdout(
        project, "file", "lib/utils.rb")
    out = cli_stdout(project, "symbol", "lib/utils.rb", "clock_time@2")
    assert len(headings(out)) == 2, out
    assert "doc comment of 2nd definition of `Rack::Utils#clock_time` added" in headings(out)[1], out
    assert "+      # :nocov:\n       def clock_time" in out, out
    first = cli_stdout(project, "symbol", "lib/utils.rb", "clock_time")
    assert len(headings(first)) == 1 and "nocov" not in first, first  # the first definition did not change


SHOP = '''module Shop
  module Tax
    RATE = 0.2
  end

  module Pricing
    RATE = 0.1

    def discount(total, pct)
      [(total * pct / 100.0).round(2), total].min
    end
  end

  class Cart
    def size
      0
    end
  end
end
'''
DISCOUNT = '''
    def discount(total, pct)
      [(total * pct / 100.0).round(2), total].min
    end
'''


def test_a_method_moved_to_another_module_of_its_file_is_renamed_not_empty(project: Path) -> None:
    """``discount`` moved, text and surrounding lines alike, from ``module Pricing`` into ``module Tax`` (above it):
    the log said ``renamed Shop::Pricing#discount -> Shop::Tax#discount`` while ``symbol lib/shop.rb
    Tax#discount`` answered "0 change(s)" and nothing else: the walk took the version that moved it for one that
    left it alone, its text and scope lines being in the older side too (in the other module)."""
    write(project, "lib/shop.rb", SHOP)
    cli_stdout(project, "checkpoint")
    moved = SHOP.replace(DISCOUNT, "\n").replace("    RATE = 0.2\n", "    RATE = 0.2\n" + DISCOUNT)
    write(project, "lib/shop.rb", moved)
    cli_stdout(project, "checkpoint", "-m", "Move discount to Tax")
    write(project, "lib/shop.rb", moved.replace("      0\n", "      1\n"))
    cli_stdout(project, "checkpoint", "-m", "Cart size")
    assert "renamed Shop::Pricing#discount -> Shop::Tax#discount" in cli_stdout(project, "log")
    out = cli_stdout(project, "symbol", "lib/shop.rb", "Tax#discount")
    assert len(headings(out)) == 2, out
    assert "as first recorded" in headings(out)[0] and "renamed from Shop::Pricing#discount" in headings(out)[1], out


COMPARE = '''module Rack
  module Utils
    # Constant time string comparison.
    def secure_compare(a, b)
      return false unless a.bytesize == b.bytesize

      l = a.unpack("C*")

      r, i = 0, -1
      b.each_byte { |v| r |= v ^ l[i += 1] }
      r == 0
    end
  end
end
'''
#: rack's "Use faster OpenSSL secure_compare if available": the old method, re-indented, is the ``else`` branch's.
OPENSSL = '''module Rack
  module Utils
    # Constant time string comparison.
    if defined?(OpenSSL.fixed_length_secure_compare)
      def secure_compare(a, b)
        return false unless a.bytesize == b.bytesize

        OpenSSL.fixed_length_secure_compare(a, b)
      end
    else
      def secure_compare(a, b)
        return false unless a.bytesize == b.bytesize

        l = a.unpack("C*")

        r, i = 0, -1
        b.each_byte { |v| r |= v ^ l[i += 1] }
        r == 0
      end
    end
  end
end
'''


def test_a_method_wrapped_in_a_condition_beside_a_new_definition_keeps_its_history_alone(project: Path) -> None:
    """After rack wrapped ``secure_compare`` in ``if defined?(OpenSSL...)``/``else`` with a new definition first, both
    ``secure_compare`` (the new OpenSSL one) and ``secure_compare@2`` (the old one, re-indented) said "modified" and
    both claimed the old method's history: git's diff maps only blank lines of the re-indented text, and a blank
    line was a vote. The file history says the truth: the first is added, the second is the old one."""
    write(project, "lib/utils.rb", COMPARE)
    cli_stdout(project, "checkpoint")
    write(project, "lib/utils.rb", COMPARE.replace("r == 0", "r.zero?"))
    cli_stdout(project, "checkpoint", "-m", "Use zero?")
    write(project, "lib/utils.rb", OPENSSL.replace("r == 0", "r.zero?"))
    cli_stdout(project, "checkpoint", "-m", "Use faster OpenSSL secure_compare if available")
    assert "added Rack::Utils#secure_compare" in cli_stdout(project, "log")
    first = cli_stdout(project, "symbol", "lib/utils.rb", "secure_compare")
    assert [h.split(" · ")[2] for h in headings(first)] == ["added"], first
    second = cli_stdout(project, "symbol", "lib/utils.rb", "secure_compare@2")
    whats = [h.split(" · ")[2] for h in headings(second)]
    assert whats[1:] == ["modified", "modified"] and whats[0].startswith("as first recorded"), \
        second


def test_an_attribute_or_constant_asked_as_a_symbol_is_pointed_to_the_file_history_not_to_python(
        project: Path) -> None:
    """``symbol lib/rack/utils.rb default_query_parser`` (an ``attr_accessor``) was told about "a Python module
    constant's changes"."""
    write(project, "lib/utils.rb", UTILS.replace("    module_function\n", "    class << self\n"
                                                 "      attr_accessor :default_query_parser\n    end\n"))
    cli_stdout(project, "checkpoint")
    done = subprocess.run([sys.executable, "-m", "code_trajectory", "symbol", "lib/utils.rb", "default_query_parser"],
                          cwd=project, env=subprocess_env(), capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "Python" not in done.stderr, done.stderr
    assert "constants and fields as `Class.NAME`; attributes and other code outside them are in get_file_trajectory" \
        in done.stderr


HEADER_HASH = '''module Rack
  class HeaderHash < Hash
    def self.new(hash = {})
      HeaderHash === hash ? hash : super(hash)
    end

    def initialize(hash = {})
      super()
      @names = {}
    end
  end
end
'''
FETCH = '''
    def fetch(k, *args)
      super(@names[k.downcase] || k, *args)
    end
'''


def test_a_class_history_says_which_methods_came_and_went_not_modified_in_them(project: Path) -> None:
    """rack's HeaderHash history said "modified in Rack::Utils::HeaderHash.new" for the version that removed
    ``self.new``, and "modified in Rack::Utils::HeaderHash#fetch" for the one that added ``fetch``, as if both were
    there and changed."""
    write(project, "lib/header_hash.rb", HEADER_HASH)
    cli_stdout(project, "checkpoint")
    no_new = HEADER_HASH.replace('''    def self.new(hash = {})
      HeaderHash === hash ? hash : super(hash)
    end

''', "")
    write(project, "lib/header_hash.rb", no_new)
    cli_stdout(project, "checkpoint", "-m", "remove useless header merge")
    with_fetch = no_new.replace("    end\n  end\nend\n", "    end\n" + FETCH + "  end\nend\n")
    write(project, "lib/header_hash.rb", with_fetch)
    cli_stdout(project, "checkpoint", "-m", "case-insensitive fetch")
    write(project, "lib/header_hash.rb", with_fetch.replace("k.downcase", "k.downcase(:fold)").replace(
        "@names = {}", "@names = {}\n      update(hash)"))
    cli_stdout(project, "checkpoint", "-m", "fold")
    out = cli_stdout(project, "symbol", "lib/header_hash.rb", "HeaderHash")
    whats = [h.split(" · ")[2] for h in headings(out)][1:]
    assert whats == ["modified; removed Rack::HeaderHash.new", "modified; added Rack::HeaderHash#fetch",
                     "modified in Rack::HeaderHash#initialize, Rack::HeaderHash#fetch"], out
