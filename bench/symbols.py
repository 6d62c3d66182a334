"""Symbol extraction and change-detection latency per language on a ~1,000-line realistic file.

Usage::

    PYTHONPATH=src python bench/symbols.py [--lines 1000] [--runs 30] [--languages python,go] [--json out.json]

For each language a file of about ``--lines`` lines is built by repeating a realistic
class/function template with varied names. After one warm-up call (grammar load, query
compilation, parser creation), each measure is the median (``--stat min``: the minimum) of
``--runs`` warm calls, in ms:

* ``parse``: tree-sitter's own parse of the file (the floor under everything else);
* ``extract``: ``LanguageSupport.extract`` (parse, definitions, naming: what a narrative
  needs to list symbols and their line spans);
* ``analyze``: ``LanguageSupport.analyze`` followed by reading every symbol's and the
  file's keys (``body_key``, ``own_key`` ..., ``code_key``): the full, eager cost;
* ``compare``: ``compare(path, old, new)`` of two versions that differ in one method body
  near the middle of the file (both versions parsed: nothing cached);
* ``history``: the cost per version of walking 20 successive versions (one edit each, at
  different places) with ``SymbolCache.compare_blobs``, each blob analysed once: how a
  narrative reads a file's history;
* ``ast``: ``ast.parse`` of the Python file, timed next to each language in the same run;
  ``x ast`` is ``extract / ast``: the machine is shared and noisy, so compare ratios across
  runs, not milliseconds.

Target: extract <= 5 ms for a 1,000-line file (tree-sitter's parse is the floor), compare
<= 2x extract.
"""


from __future__ import annotations

import argparse
import ast
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))


TEMPLATES: dict[str, tuple[str, str, str]] = {
    "python": ("mod.py", "import os\nimport json\nfrom typing import Any\n\n", '''
class Store{i}:
    """Keeps records for tenant {i}."""

    retries = {i}

    def __init__(self, path: str, limit: int = 10) -> None:
        self.path = path
        self.limit = limit  # upper bound
        self._items: dict[str, Any] = {{}}

    @property
    def size(self) -> int:
        return len(self._items)

    def load(self, key: str) -> Any:
        if key not in self._items:
            with open(os.path.join(self.path, key)) as fh:
                self._items[key] = json.load(fh)
        return self._items[key]

    def save(self, key: str, value: Any) -> None:
        for attempt in range(self.retries):
            try:
                with open(os.path.join(self.path, key), "w") as fh:
                    json.dump(value, fh)
                return
            except OSError:
                continue


def make_store{i}(path: str) -> Store{i}:
    def check(p: str) -> bool:
        return os.path.isdir(p)
    return Store{i}(path) if check(path) else Store{i}(".")
'''),
    "javascript": ("app.js", 'import fs from "fs";\nconst path = require("path");\n\n', '''
export class Store{i} extends Base {{
  constructor(dir, limit = 10) {{
    super();
    this.dir = dir; // where records live
    this.limit = limit;
    this.items = new Map();
  }}

  get size() {{
    return this.items.size;
  }}

  load(key) {{
    if (!this.items.has(key)) {{
      const text = fs.readFileSync(path.join(this.dir, key), "utf8");
      this.items.set(key, JSON.parse(text));
    }}
    return this.items.get(key);
  }}

  save = (key, value) => {{
    fs.writeFileSync(path.join(this.dir, key), JSON.stringify(value));
  }};
}}

export const makeStore{i} = (dir) => {{
  const check = (d) => fs.existsSync(d);
  return check(dir) ? new Store{i}(dir) : new Store{i}(".");
}};

function helper{i}(a, b) {{
  return `${{a}}-${{b}}`;
}}
'''),
    "typescript": ("app.ts", 'import * as fs from "fs";\n\n', '''
export interface Record{i} {{
  key: string;
  value: unknown;
}}

export class Store{i}<T> implements Repo<T> {{
  private items = new Map<string, T>();
  constructor(private dir: string, private limit: number = 10) {{}}

  get size(): number {{
    return this.items.size;
  }}

  load(key: string): T | undefined {{
    if (!this.items.has(key)) {{
      const text = fs.readFileSync(`${{this.dir}}/${{key}}`, "utf8");
      this.items.set(key, JSON.parse(text) as T);
    }}
    return this.items.get(key);
  }}

  save(key: string, value: T): void {{
    fs.writeFileSync(`${{this.dir}}/${{key}}`, JSON.stringify(value));
  }}
}}

export type Key{i} = string | number;

export function makeStore{i}<T>(dir: string): Store{i}<T> {{
  const check = (d: string): boolean => fs.existsSync(d);
  return check(dir) ? new Store{i}<T>(dir) : new Store{i}<T>(".");
}}
'''),
    "go": ("store.go", 'package store\n\nimport (\n\t"encoding/json"\n\t"os"\n)\n\n', '''
// Store{i} keeps records.
type Store{i}[T any] struct {{
	dir   string
	limit int
	items map[string]T
}}

func NewStore{i}[T any](dir string) *Store{i}[T] {{
	return &Store{i}[T]{{dir: dir, limit: 10, items: map[string]T{{}}}}
}}

func (s *Store{i}[T]) Size() int {{
	return len(s.items)
}}

func (s *Store{i}[T]) Load(key string) (T, error) {{
	if v, ok := s.items[key]; ok {{
		return v, nil
	}}
	var v T
	data, err := os.ReadFile(s.dir + "/" + key)
	if err != nil {{
		return v, err
	}}
	err = json.Unmarshal(data, &v)
	s.items[key] = v
	return v, err
}}

func (s Store{i}[T]) Save(key string, value T) error {{
	data, err := json.Marshal(value)
	if err != nil {{
		return err
	}}
	return os.WriteFile(s.dir+"/"+key, data, 0o644)
}}
'''),
    "rust": ("store.rs", "use std::collections::HashMap;\nuse std::fs;\n\n", '''
/// Keeps records.
#[derive(Debug, Default)]
pub struct Store{i} {{
    dir: String,
    limit: usize,
    items: HashMap<String, String>,
}}

impl Store{i} {{
    pub fn new(dir: &str) -> Self {{
        Store{i} {{ dir: dir.to_string(), limit: 10, items: HashMap::new() }}
    }}

    pub fn load(&mut self, key: &str) -> std::io::Result<&String> {{
        if !self.items.contains_key(key) {{
            let text = fs::read_to_string(format!("{{}}/{{}}", self.dir, key))?;
            self.items.insert(key.to_string(), text);
        }}
        Ok(&self.items[key])
    }}

    pub fn save(&self, key: &str, value: &str) -> std::io::Result<()> {{
        fs::write(format!("{{}}/{{}}", self.dir, key), value)
    }}
}}

impl std::fmt::Display for Store{i} {{
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {{
        write!(f, "Store({{}})", self.dir)
    }}
}}

pub fn make_store{i}(dir: &str) -> Store{i} {{
    let check = |d: &str| std::path::Path::new(d).is_dir();
    if check(dir) {{ Store{i}::new(dir) }} else {{ Store{i}::new(".") }}
}}
'''),
    "java": ("Store.java", "package app;\n\nimport java.util.HashMap;\nimport java.util.Map;\n\npublic class Store {\n",
             '''
  /** Keeps records. */
  public static class Store{i}<T> {{
    private final String dir;
    private final Map<String, T> items = new HashMap<>();

    public Store{i}(String dir) {{
      this.dir = dir;
    }}

    public int size() {{
      return items.size();
    }}

    public T load(String key) {{
      if (!items.containsKey(key)) {{
        items.put(key, read(dir + "/" + key));
      }}
      return items.get(key);
    }}

    public void save(String key, T value) {{
      items.put(key, value); // write-through later
    }}

    public void save(String key, T value, boolean flush) {{
      save(key, value);
      if (flush) {{
        items.clear();
      }}
    }}

    private T read(String path) {{
      return null;
    }}
  }}
'''),
    "c": ("store.c", "#include <stdio.h>\n#include <stdlib.h>\n\n", '''
/* Keeps records. */
struct store{i} {{
    char *dir;
    int limit;
    int size;
}};

struct store{i} *store{i}_new(const char *dir) {{
    struct store{i} *s = malloc(sizeof *s);
    if (s == NULL) {{
        return NULL;
    }}
    s->dir = (char *)dir;
    s->limit = 10;
    s->size = 0;
    return s;
}}

int store{i}_load(struct store{i} *s, const char *key, char *out, size_t n) {{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", s->dir, key);
    FILE *fh = fopen(path, "r");
    if (!fh) {{
        return -1;
    }}
    size_t got = fread(out, 1, n - 1, fh);
    out[got] = '\\0';
    fclose(fh);
    return (int)got;
}}

void store{i}_free(struct store{i} *s) {{
    free(s);
}}
'''),
    "cpp": ("store.cpp", "#include <map>\n#include <string>\n\nnamespace app {\n", '''
/// Keeps records.
template <typename T>
class Store{i} {{
 public:
  explicit Store{i}(std::string dir) : dir_(std::move(dir)) {{}}
  ~Store{i}() = default;

  std::size_t size() const {{ return items_.size(); }}

  const T& load(const std::string& key) {{
    auto it = items_.find(key);
    if (it == items_.end()) {{
      it = items_.emplace(key, read(dir_ + "/" + key)).first;
    }}
    return it->second;
  }}

  void save(const std::string& key, T value);
  void save(const std::string& key, T value, bool flush);

 private:
  T read(const std::string& path) {{ return T{{}}; }}
  std::string dir_;
  std::map<std::string, T> items_;
}};

template <typename T>
void Store{i}<T>::save(const std::string& key, T value) {{
  items_[key] = std::move(value);
}}
'''),
    "ruby": ("store.rb", 'require "json"\n\nmodule App\n', '''
  # Keeps records.
  class Store{i}
    attr_reader :dir

    def initialize(dir, limit: 10)
      @dir = dir
      @limit = limit
      @items = {{}}
    end

    def self.open(dir)
      new(dir)
    end

    def size
      @items.size
    end

    def load(key)
      @items[key] ||= JSON.parse(File.read(File.join(@dir, key)))
    end

    def save(key, value)
      File.write(File.join(@dir, key), JSON.dump(value))
      @items[key] = value
    end
  end
'''),
    "csharp": ("Store.cs", "using System;\nusing System.Collections.Generic;\n\nnamespace App.Core {\n", """
  /// <summary>Keeps records.</summary>
  public class Store{i}<T> : IRepo<T> {{
    private readonly string dir;
    private readonly Dictionary<string, T> items = new Dictionary<string, T>();

    public Store{i}(string dir) {{
      this.dir = dir;
    }}

    public int Size {{ get {{ return items.Count; }} }}

    public T Load(string key) {{
      if (!items.ContainsKey(key)) {{
        items[key] = Read(dir + "/" + key);
      }}
      return items[key];
    }}

    public void Save(string key, T value) {{
      items[key] = value; // write-through later
    }}

    public void Save(string key, T value, bool flush) {{
      Save(key, value);
      if (flush) {{
        items.Clear();
      }}
    }}

    private T Read(string path) {{
      return default(T);
    }}
  }}
"""),
    "php": ("Store.php", "<?php\nnamespace App;\n\nuse App\\Base\\Repo;\n\n", """
/** Keeps records. */
class Store{i} extends Repo
{{
    private string $dir;
    private array $items = [];

    public function __construct(string $dir, int $limit = 10)
    {{
        $this->dir = $dir;
        $this->limit = $limit; // upper bound
    }}

    public function size(): int
    {{
        return count($this->items);
    }}

    public function load(string $key)
    {{
        if (!isset($this->items[$key])) {{
            $text = file_get_contents($this->dir . "/" . $key);
            $this->items[$key] = json_decode($text, true);
        }}
        return $this->items[$key];
    }}

    public function save(string $key, $value): void
    {{
        file_put_contents("{{$this->dir}}/{{$key}}", json_encode($value));
    }}
}}

function make_store{i}(string $dir): Store{i}
{{
    return is_dir($dir) ? new Store{i}($dir) : new Store{i}(".");
}}
"""),
}
FOOTERS = {"java": "}\n", "cpp": "}  // namespace app\n", "ruby": "end\n", "csharp": "}\n"}


def build(language: str, lines: int) -> tuple[str, bytes]:
    """Return ``(file name, source)`` of about ``lines`` lines for ``language``."""
    name, header, template = TEMPLATES[language]
    parts = [header]
    count = header.count("\n")
    i = 0
    while count < lines:
        block = template.format(i=i)
        parts.append(block)
        count += block.count("\n")
        i += 1
    parts.append(FOOTERS.get(language, ""))
    return name, "".join(parts).encode()


EDITS: dict[str, tuple[str, str]] = {
    "python": ("return len(self._items)", "return len(self._items) + 0"),
    "javascript": ("return this.items.size;", "return this.items.size + 0;"),
    "typescript": ("return this.items.size;", "return this.items.size + 0;"),
    "go": ("return len(s.items)", "return len(s.items) + 0"),
    "rust": ("limit: 10, items", "limit: 11, items"),
    "java": ("return items.size();", "return items.size() + 0;"),
    "c": ("s->limit = 10;", "s->limit = 11;"),
    "cpp": ("return items_.size();", "return items_.size() + 0;"),
    "ruby": ("@items.size", "@items.size + 0"),
    "csharp": ("return items.Count;", "return items.Count + 0;"),
    "php": ("return count($this->items);", "return count($this->items) + 0;"),
}


def versions(language: str, lines: int, count: int) -> tuple[str, list[bytes]]:
    """Return ``(file name, sources)``: ``count`` versions, each with one more block edited (spread over the file).

    ``sources[0]`` is :func:`build`'s file; ``sources[1]`` edits the middle block.
    """
    name, header, template = TEMPLATES[language]
    blocks = []
    n = header.count("\n")
    while n < lines:
        blocks.append(template.format(i=len(blocks)))
        n += blocks[-1].count("\n")
    old, new = EDITS[language]
    out = []
    order = [len(blocks) // 2] + [(k * 7919) % len(blocks) for k in range(1, count)]
    for k in range(count):
        out.append((header + "".join(blocks) + FOOTERS.get(language, "")).encode())
        b = order[k]
        blocks[b] = blocks[b].replace(old, new, 1) if old in blocks[b] else blocks[b].replace(new, old, 1)
    return name, out


def _timer(clock: str):
    return time.thread_time if clock == "cpu" else time.perf_counter


#: How the runs of one measure are summarised: ``median`` (the default), or ``min`` (an estimate of
#: the uncontended time on a shared machine); set from ``--stat``.
STAT = statistics.median


def median_ms(fn, runs: int, clock: str = "wall", other=None) -> float | tuple[float, float]:
    """Median (or :data:`STAT`) time of ``fn()`` over ``runs`` calls, in ms (``clock``: ``wall`` or this
    thread's ``cpu`` time).

    With ``other``, the two functions are called alternately (same conditions) and both medians returned.
    """
    now = _timer(clock)
    times: list[float] = []
    times_other: list[float] = []
    for _ in range(runs):
        start = now()
        fn()
        times.append((now() - start) * 1000)
        if other is not None:
            start = now()
            other()
            times_other.append((now() - start) * 1000)
    if other is None:
        return STAT(times)
    return STAT(times), STAT(times_other)


def full_analysis(lang, source: bytes) -> None:
    """``analyze`` and read every key (the eager cost, whatever the implementation defers)."""
    analysis = lang.analyze(source)
    for s in analysis.symbols:
        _ = (s.text_hash, s.body_key, s.own_key, s.own_hash, s.own_comments)
    _ = (analysis.text_hash, analysis.top_key, analysis.imports_key, analysis.comments_key, analysis.code_key)


def history_ms(api, name: str, sources: list[bytes], runs: int, clock: str = "wall") -> float:
    """Per-version cost of comparing consecutive versions through a fresh ``SymbolCache`` of ``api``."""
    oids = [f"{i:040x}" for i in range(len(sources))]
    blobs = dict(zip(oids, sources))
    now = _timer(clock)
    times = []
    for _ in range(runs):
        cache = api.SymbolCache()
        start = now()
        for a, b in zip(oids, oids[1:]):
            cache.compare_blobs(name, a, b, blobs.__getitem__)
        times.append((now() - start) * 1000 / (len(sources) - 1))
    return STAT(times)


def load_baseline(rev: str):
    """Import ``code_trajectory.symbols`` as it is at git revision ``rev``, as a separate package."""
    import importlib
    import subprocess
    import tempfile

    repo = Path(__file__).resolve().parents[1]
    root = Path(tempfile.mkdtemp(prefix="symbols-baseline-"))
    archive = subprocess.run(["git", "-C", str(repo), "archive", rev, "src/code_trajectory/symbols"],
                             capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(root)], input=archive, check=True)
    (root / "src" / "code_trajectory" / "symbols").rename(root / "symbols_baseline")
    sys.path.insert(0, str(root))
    return importlib.import_module("symbols_baseline")


def measure(api, language: str, args, py_source: bytes, other=None) -> dict | tuple[dict, dict]:
    """One row of measures for ``api`` (a ``code_trajectory.symbols``-like package); with ``other``,
    every measure alternates between the two packages and two rows are returned."""
    name, source = build(language, args.lines)
    _, history = versions(language, args.lines, 21)
    assert history[0] == source
    edited = history[1]
    apis = [api] + ([other] if other is not None else [])
    rows = []
    for a in apis:
        lang = a.language_for(name)
        assert lang is not None
        symbols = lang.extract(source)  # warm: grammar load, query compile, parser creation
        changes = a.compare(name, source, edited)
        assert changes is not None and changes.modified, (language, changes)
        full_analysis(lang, source)
        rows.append({"language": language, "lines": source.count(b"\n"), "symbols": len(symbols)})
    ast.parse(py_source)

    def both(make):
        fns = [make(a) for a in apis]
        got = median_ms(fns[0], args.runs, args.clock, fns[1] if other is not None else None)
        return got if other is not None else (got,)

    for label, make in (
        ("parse", lambda a: (lambda lang=a.language_for(name): lang.parse(source))),  # noqa: B008 - resolved untimed
        ("extract", lambda a: (lambda lang=a.language_for(name): lang.extract(source))),  # noqa: B008 - untimed
        ("analyze", lambda a: (lambda lang=a.language_for(name): full_analysis(lang, source))),  # noqa: B008 - untimed
        ("compare", lambda a: (lambda: a.compare(name, source, edited))),
    ):
        for row, value in zip(rows, both(make)):
            row[label] = value
    for row, a in zip(rows, apis):
        row["history"] = history_ms(a, name, history, max(3, args.runs // 10), args.clock)
    ast_ms = median_ms(lambda: ast.parse(py_source), args.runs, args.clock)
    for row in rows:
        row["ast"] = ast_ms
        row["x ast"] = row["extract"] / ast_ms
        row["cmp/ext"] = row["compare"] / row["extract"]
    return rows[0] if other is None else (rows[0], rows[1])


COLUMNS = ("language", "lines", "symbols", "parse", "extract", "analyze", "compare", "history", "ast", "x ast",
           "cmp/ext")


def print_table(title: str, rows: list[dict]) -> None:
    print(title)
    print(f"{COLUMNS[0]:<11}" + "".join(f"{c:>9}" for c in COLUMNS[1:]))
    print(f"{'':<11}{'':>9}{'':>9}" + "".join(f"{'ms':>9}" for _ in range(6)))
    for row in rows:
        print(f"{row['language']:<11}{row['lines']:>9}{row['symbols']:>9}"
              + "".join(f"{row[c]:>9.2f}" for c in COLUMNS[3:]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lines", type=int, default=1000)
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--languages", default=",".join(TEMPLATES), help="comma-separated subset")
    ap.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                    help="wall time, or this thread's CPU time (steadier on a shared machine)")
    ap.add_argument("--against", metavar="REV",
                    help="also measure the package as it is at this git revision, alternating call by call")
    ap.add_argument("--stat", choices=("median", "min"), default="median",
                    help="summary of each measure's runs (min: the least contended run)")
    ap.add_argument("--json", help="also write the rows to this file")
    args = ap.parse_args()
    global STAT
    STAT = min if args.stat == "min" else statistics.median
    import code_trajectory.symbols as api

    baseline = load_baseline(args.against) if args.against else None
    py_source = build("python", args.lines)[1]
    rows, base_rows = [], []
    for language in args.languages.split(","):
        got = measure(api, language, args, py_source, baseline)
        if baseline is None:
            rows.append(got)
            print_table("", [got]) if len(rows) == 1 else print(
                f"{got['language']:<11}{got['lines']:>9}{got['symbols']:>9}"
                + "".join(f"{got[c]:>9.2f}" for c in COLUMNS[3:]))
        else:
            rows.append(got[0])
            base_rows.append(got[1])
            print(f"  {language}: extract {got[1]['extract']:.2f} -> {got[0]['extract']:.2f} ms, "
                  f"compare {got[1]['compare']:.2f} -> {got[0]['compare']:.2f} ms", flush=True)
    if baseline is not None:
        print_table(f"\nbaseline {args.against} ({args.clock} time, {args.stat} of {args.runs} runs, alternating):",
                    base_rows)
        print_table("\nthis tree:", rows)
    if args.json:
        Path(args.json).write_text(json.dumps({"rows": rows, "baseline": base_rows}, indent=1))


if __name__ == "__main__":
    main()
