"""The file types `Grep`'s `type` key knows (ripgrep's `--type` names), each with the file-name globs it covers.

Both engines read this one table: the Python search filters file names with it, and ripgrep is handed these exact
definitions (`--type-clear NAME --type-add NAME:GLOB …`) rather than its own built-in ones, which differ between
ripgrep versions. So a type means the same files on both engines, and a name not listed here is refused with the
list of known ones. The globs are ripgrep 13's for these names; each matches a file's base name.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping

__all__ = ["FILE_TYPES", "type_matches", "unknown_type_message"]

FILE_TYPES: Mapping[str, tuple[str, ...]] = {
    "asciidoc": ("*.adoc", "*.asc", "*.asciidoc"),
    "c": ("*.[chH]", "*.[chH].in", "*.cats"),
    "clojure": ("*.clj", "*.cljc", "*.cljs", "*.cljx"),
    "cmake": ("*.cmake", "CMakeLists.txt"),
    "config": ("*.cfg", "*.conf", "*.config", "*.ini"),
    "cpp": ("*.[ChH]", "*.[ChH].in", "*.[ch]pp", "*.[ch]pp.in", "*.[ch]xx", "*.[ch]xx.in", "*.cc", "*.cc.in",
            "*.hh", "*.hh.in", "*.inl"),
    "cs": ("*.cs",),
    "csharp": ("*.cs",),
    "css": ("*.css", "*.scss"),
    "csv": ("*.csv",),
    "dart": ("*.dart",),
    "docker": ("*Dockerfile*",),
    "elixir": ("*.eex", "*.ex", "*.exs"),
    "erlang": ("*.erl", "*.hrl"),
    "go": ("*.go",),
    "haskell": ("*.c2hs", "*.cpphs", "*.hs", "*.hsc", "*.lhs"),
    "html": ("*.ejs", "*.htm", "*.html"),
    "java": ("*.java", "*.jsp", "*.jspx", "*.properties"),
    "js": ("*.js", "*.jsx", "*.vue"),
    "json": ("*.json", "composer.lock"),
    "jsonl": ("*.jsonl",),
    "julia": ("*.jl",),
    "jupyter": ("*.ipynb", "*.jpynb"),
    "kotlin": ("*.kt", "*.kts"),
    "lua": ("*.lua",),
    "make": ("*.mak", "*.mk", "[Gg][Nn][Uu]makefile", "[Gg][Nn][Uu]makefile.am", "[Gg][Nn][Uu]makefile.in",
             "[Mm]akefile", "[Mm]akefile.am", "[Mm]akefile.in"),
    "markdown": ("*.markdown", "*.md", "*.mdown", "*.mkdn"),
    "md": ("*.markdown", "*.md", "*.mdown", "*.mkdn"),
    "perl": ("*.PL", "*.perl", "*.pl", "*.plh", "*.plx", "*.pm", "*.t"),
    "php": ("*.php", "*.php3", "*.php4", "*.php5", "*.phtml"),
    "protobuf": ("*.proto",),
    "py": ("*.py",),
    "r": ("*.R", "*.Rmd", "*.Rnw", "*.r"),
    "rst": ("*.rst",),
    "ruby": ("*.gemspec", "*.rb", "*.rbw", ".irbrc", "Gemfile", "Rakefile", "config.ru"),
    "rust": ("*.rs",),
    "scala": ("*.sbt", "*.scala"),
    "sh": ("*.bash", "*.bashrc", "*.csh", "*.cshrc", "*.ksh", "*.kshrc", "*.sh", "*.tcsh", "*.zsh", ".bash_login",
           ".bash_logout", ".bash_profile", ".bashrc", ".cshrc", ".kshrc", ".login", ".logout", ".profile",
           ".tcshrc", ".zlogin", ".zlogout", ".zprofile", ".zshenv", ".zshrc"),
    "sql": ("*.psql", "*.sql"),
    "swift": ("*.swift",),
    "tex": ("*.bib", "*.cls", "*.dtx", "*.ins", "*.ltx", "*.sty", "*.tex"),
    "tf": ("*.tf",),
    "toml": ("*.toml", "Cargo.lock"),
    "ts": ("*.ts", "*.tsx"),
    "txt": ("*.txt",),
    "vim": ("*.vim",),
    "xml": ("*.dtd", "*.rng", "*.sch", "*.xhtml", "*.xjb", "*.xml", "*.xml.dist", "*.xsd", "*.xsl", "*.xslt"),
    "yaml": ("*.yaml", "*.yml"),
    "zig": ("*.zig",),
}


def type_matches(file_type: str, name: str) -> bool:
    """Is a file of base name `name` of `file_type` (a key of FILE_TYPES)?"""
    return any(fnmatch.fnmatchcase(name, glob) for glob in FILE_TYPES[file_type])


def unknown_type_message(file_type: str) -> str:
    return (f"unknown file type {file_type!r} for type; known types: {', '.join(FILE_TYPES)} "
            "(or filter by file name with glob, e.g. \"*.ext\")")
