"""Ruby's ``private def name`` (rack's ``Rack::Request::Helpers#cache_for``): the ``private`` before a ``def`` is the
method's, not its class's or module's."""

from __future__ import annotations

from code_trajectory.symbols import compare, language_for

#: Rack::Request::Helpers before "Fix handling of cached values in `Rack::Request`. (#2054)".
HELPERS = b'''module Rack
  class Request
    module Helpers
      def GET
        get_header(RACK_REQUEST_QUERY_HASH)
      end
    end
  end
end
'''

#: What that commit added: a ``private def`` and a plain one.
ADDED = b'''      private def cache_for(key, validity_key, current_value)
        get_header(key)
      end

      def cache_key
        query_parser.class
      end

'''


def test_adding_a_private_def_adds_a_method_and_modifies_nothing() -> None:
    """The file history said "modified Rack::Request::Helpers" beside the added methods (and again when they were
    removed): the ``private `` in front of the ``def`` counted as the module's own code."""
    new = HELPERS.replace(b"      def GET\n", ADDED + b"      def GET\n")
    changes = compare("lib/rack/request.rb", HELPERS, new)
    assert changes.added == ("Rack::Request::Helpers#cache_for", "Rack::Request::Helpers#cache_key")
    assert changes.modified == ()
    back = compare("lib/rack/request.rb", new, HELPERS)
    assert (back.removed, back.modified) == (("Rack::Request::Helpers#cache_for", "Rack::Request::Helpers#cache_key"),
                                             ())


def test_making_a_method_private_in_place_modifies_the_method() -> None:
    public = HELPERS.replace(b"      def GET\n", b"      def cache_key\n        1\n      end\n\n      def GET\n")
    private = public.replace(b"      def cache_key\n", b"      private def cache_key\n")
    assert [(s.name, s.start_line, s.end_line) for s in language_for("a.rb").analyze(private).symbols][3] == (
        "Rack::Request::Helpers#cache_key", 4, 6)
    assert compare("lib/rack/request.rb", public, private).modified == ("Rack::Request::Helpers#cache_key",)
