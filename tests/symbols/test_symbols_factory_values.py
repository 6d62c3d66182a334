"""JavaScript/TypeScript values made by a call given a function (zod's ``export const $ZodString =
core.$constructor("$ZodString", (inst, def) => {...})``, ``React.memo(() => ...)``): symbols named by the constant,
and what the function defines named in them."""

from __future__ import annotations

import textwrap

from code_trajectory.history.versions import describe_symbols
from code_trajectory.symbols import compare, language_for

# zod's packages/zod/src/v4/core/schemas.ts, cut down: every schema is a constant made by `core.$constructor`,
# whose function assigns `inst._zod.parse` (and `inst._zod.check`) again and again
ZOD = '''\
    import * as core from "./core.js";

    export const $ZodString: core.$constructor<$ZodString> = /*@__PURE__*/ core.$constructor("$ZodString", (inst, def) => {
      $ZodType.init(inst, def);
      inst._zod.parse = (payload, _) => {
        payload.value = String(payload.value);
        return payload;
      };
    });

    export const $ZodNumber: core.$constructor<$ZodNumber> = /*@__PURE__*/ core.$constructor("$ZodNumber", (inst, def) => {
      $ZodType.init(inst, def);
      inst._zod.parse = (payload, _ctx) => {
        payload.value = Number(payload.value);
        return payload;
      };
    });

    const Row = React.memo(function Row(props) {
      return props.label;
    });
    const total = [1, 2].reduce((a, b) => a + b, 0);
    '''


def names(path: str, source: str) -> list[tuple[str, str, int, int]]:
    language = language_for(path)
    assert language is not None
    return [(s.name, s.kind, s.start_line, s.end_line) for s in language.extract(textwrap.dedent(source).encode())]


def test_a_constant_made_by_a_call_given_a_function_is_a_symbol_named_by_the_constant():
    expected = [
        ("$ZodString", "function", 3, 9),
        ("$ZodString.inst._zod.parse", "function", 5, 8),
        ("$ZodNumber", "function", 11, 17),
        ("$ZodNumber.inst._zod.parse", "function", 13, 16),
        ("Row", "function", 19, 21),
        ("total", "function", 22, 22),  # any top-level constant made by a call given a function (said as a function)
    ]
    assert names("src/schemas.ts", ZOD) == expected
    assert names("src/schemas.js", ZOD.replace(": core.$constructor<$ZodString>", "")
                 .replace(": core.$constructor<$ZodNumber>", "")) == expected


def test_a_change_in_one_factory_function_names_its_constant():
    # before: "modified 2nd definition of inst._zod.parse", which tells nobody which schema changed
    old = textwrap.dedent(ZOD).encode()
    new = old.replace(b"payload.value = Number(payload.value);", b"payload.value = Number(payload.value) || 0;")
    changes = compare("src/schemas.ts", old, new)
    assert changes is not None
    assert describe_symbols(changes, lean=True) == "modified $ZodNumber.inst._zod.parse"
    changes = compare("src/schemas.ts", old, old.replace(b"$ZodType.init(inst, def);\n  inst._zod.parse = (payload, _ctx)",
                                                         b"$ZodType.init(inst, def, 2);\n  inst._zod.parse = (payload, _ctx)"))
    assert changes is not None
    assert describe_symbols(changes, lean=True) == "modified $ZodNumber"


def test_a_type_beside_a_value_of_its_name_is_name_type():
    # zod declares `export interface $ZodString` beside `export const $ZodString`; the later of the two was
    # "$ZodString@2", said "2nd definition of $ZodString", whichever of them it was
    source = ZOD.replace("    export const $ZodNumber", "    export interface $ZodNumber extends $ZodType {\n"
                         "      _zod: $ZodNumberInternals;\n    }\n\n    export const $ZodNumber")
    source += "    type Row = ReturnType<typeof Row>;\n"
    assert [n for n, *_ in names("src/schemas.ts", source)] == [
        "$ZodString", "$ZodString.inst._zod.parse", "$ZodNumber(type)", "$ZodNumber", "$ZodNumber.inst._zod.parse",
        "Row", "total", "Row(type)"]
    old = textwrap.dedent(source).encode()
    changes = compare("src/schemas.ts", old, old.replace(b"$ZodType.init(inst, def);\n  inst._zod.parse = (payload, _ctx)",
                                                         b"$ZodType.init(inst, def, 2);\n  inst._zod.parse = (payload, _ctx)"))
    assert changes is not None
    assert describe_symbols(changes, lean=True) == "modified $ZodNumber"
    changes = compare("src/schemas.ts", old, old.replace(b"_zod: $ZodNumberInternals;", b"_zod: $ZodNumberInternals2;"))
    assert changes is not None
    assert describe_symbols(changes, lean=True) == "modified $ZodNumber(type) (field `_zod` changed)"


def test_an_interfaces_overloads_of_one_method_are_one_symbol():
    # zod's classic ZodObject interface: `partial(): ...;` then `partial<M>(mask: M): ...;` were `ZodObject.partial`
    # and `ZodObject.partial@2`, said "2nd definition of ZodObject.partial"
    source = '''\
        export interface ZodObject<Shape> {
          pick<M>(mask: M): ZodObject<Shape>;
          partial(): ZodObject<Shape>;
          // with a mask
          partial<M>(
            mask: M
          ): ZodObject<Shape>;
          strict(): this;
        }
        '''
    assert names("src/schemas.ts", source) == [
        ("ZodObject", "interface", 1, 9),
        ("ZodObject.pick", "method", 2, 2),
        ("ZodObject.partial", "method", 3, 7),  # its overloads and the comment between them
        ("ZodObject.strict", "method", 8, 8),
    ]
    old = textwrap.dedent(source).encode()
    changes = compare("src/schemas.ts", old, old.replace(b"    mask: M\n", b"    mask: M & object\n"))
    assert changes is not None
    assert describe_symbols(changes, lean=True) == "modified ZodObject.partial"


# zod's packages/zod/src/v4/classic/schemas.ts, cut down: properties defined on the instance in the factory
ZOD_PROPERTIES = '''\
    export const ZodType = core.$constructor("ZodType", (inst, def) => {
      core.$ZodType.init(inst, def);
      Object.defineProperty(inst, "_def", { value: def });
      Object.defineProperty(inst, "description", {
        get() {
          return globalRegistry.get(inst)?.description;
        },
        configurable: true,
      });
      Object.defineProperty(inst, "meta", {
        get: () => inst._meta,
        set(value) {
          inst._meta = value;
        },
      });
      return inst;
    });
    Object.defineProperties(Schema.prototype, { size: { get() { return 1; } }, "clone": { value: function () {} } });
    '''


def test_a_property_descriptors_accessors_are_named_by_the_property():
    # before: ZodType.Object.defineProperty.get, then "2nd definition of ZodType.Object.defineProperty.get"
    assert names("src/schemas.ts", ZOD_PROPERTIES) == [
        ("ZodType", "function", 1, 17),
        ("ZodType.description(get)", "method", 5, 7),
        ("ZodType.meta(get)", "function", 11, 11),
        ("ZodType.meta(set)", "method", 12, 14),
        ("size(get)", "method", 18, 18),
        ("clone", "function", 18, 18),
    ]
    old = textwrap.dedent(ZOD_PROPERTIES).encode()
    changes = compare("src/schemas.js", old, old.replace(b"inst._meta = value;", b"inst._meta = value ?? {};"))
    assert changes is not None
    assert describe_symbols(changes, lean=True) == "modified ZodType.meta(set)"


# a property named by a variable: the accessors were named by the call (``install.Object.defineProperty.get``), the
# name property descriptors had before they were named by their property
BINDINGS = '''\
    function install(obj, key, fn) {
      Object.defineProperty(obj, key, {
        get() { return fn(); },
        set(v) { fn(v); },
      });
      Object.defineProperty(obj, "named", { get() { return 1; } });
      Object.defineProperties(obj, { [key]: { get() { return 2; } } });
      Object.defineProperty(obj, `tpl`, { value: function () { return 3; } });
      Object.defineProperties(obj, { 0: { get() { return 4; } } });
    }
    '''


def test_a_descriptor_of_a_property_named_by_a_variable_is_no_named_symbol():
    assert names("src/bind.js", BINDINGS) == [
        ("install", "function", 1, 10),
        ("install.named(get)", "method", 6, 6),
        ("install.tpl", "function", 8, 8),
        ("install.0(get)", "method", 9, 9),
    ]
    old = textwrap.dedent(BINDINGS).encode()
    changes = compare("src/bind.js", old, old.replace(b"return fn();", b"return fn() ?? null;"))
    assert changes is not None
    assert describe_symbols(changes, lean=True) == "modified install"
