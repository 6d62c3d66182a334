"""What the shadow repository's config and ``info/attributes`` say, and why."""

from __future__ import annotations

from code_trajectory.git import gitcmd

#: Config written into the shadow repository. ``logAllRefUpdates=always`` keeps
#: a reflog for every shadow ref, so commits squashed by ``consolidate`` stay
#: reachable; reflogs never expire on their own.
SHADOW_REPO_CONFIG: tuple[tuple[str, str], ...] = (
    ("core.bare", "false"),
    ("core.logAllRefUpdates", "always"),
    ("core.autocrlf", "false"),
    ("core.fsmonitor", "false"),
    ("core.quotePath", "false"),
    ("gc.auto", "0"),
    ("gc.reflogExpire", "never"),
    ("gc.reflogExpireUnreachable", "never"),
    ("maintenance.auto", "false"),
    ("commit.gpgSign", "false"),
    ("diff.renames", "true"),
    ("fetch.fsckObjects", "true"),
    ("user.name", gitcmd.IDENTITY_NAME),
    ("user.email", gitcmd.IDENTITY_EMAIL),
)

#: git's built-in diff drivers (gitattributes(5), "Defining a custom hunk-header"),
#: by file extension: they make hunk headers name the enclosing function or class.
DIFF_DRIVERS: dict[str, tuple[str, ...]] = {
    "python": ("*.py", "*.pyi", "*.pyw"),
    "java": ("*.java",),
    "golang": ("*.go",),
    "rust": ("*.rs",),
    "cpp": ("*.c", "*.h", "*.cc", "*.cpp", "*.cxx", "*.hpp", "*.hh"),
    "csharp": ("*.cs",),
    "kotlin": ("*.kt", "*.kts"),
    "php": ("*.php",),
    "ruby": ("*.rb",),
    "perl": ("*.pl", "*.pm"),
    "objc": ("*.m", "*.mm"),
    "css": ("*.css", "*.scss", "*.less"),
    "html": ("*.html", "*.htm"),
    "markdown": ("*.md", "*.markdown"),
    "bash": ("*.sh", "*.bash"),
    "elixir": ("*.ex", "*.exs"),
    "fortran": ("*.f", "*.f90", "*.f95"),
    "tex": ("*.tex",),
    "scheme": ("*.scm", "*.ss"),
    "pascal": ("*.pas",),
    "matlab": ("*.mat",),
    "dts": ("*.dts", "*.dtsi"),
}
