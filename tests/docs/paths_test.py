#!/usr/bin/env python3
"""Every file a document or a source comment names exists.

Reads the documents (README.md, DESIGN.md, docs/**/*.md, schemas/*.md,
bench/*.md, reports/README.md) whole, and the comments of the sources
(orchestrator/, trainer/, common/, tests/, scripts/, bench/, cmake/,
schemas/migrations/), and checks each repository path they name:

- a Markdown link's target must exist beside the page, and a path from the
  naming file's folder (`../bench/README.md`) there; a path with a folder (`orchestrator/run/runner.cc`,
  `docs/model.md`, `launch/cluster/links.h`) must exist relative to the
  naming file's folder or one above it, or to `orchestrator/`, `trainer/`
  or `tests/` (the codebase writes stage paths from there); a
  committed database `reports/data/NAME.db` exists as `NAME.db.tar.xz`;
- a bare file name with a source extension (`physics.cc`) must be the
  name of some file of the tree;
- `file:LINE` and `file:LINE-LINE` must fall within the file;
- a symbol named with its file ("ProfileScope in orchestrator/model/fitting.h",
  "`PushOrder`, trainer/parameter_server.h") must be in that file;
- a Markdown link to a heading (`model.md#prediction-intervals`,
  `#the-models`) must name a heading of that page, as GitHub makes its
  anchor, and a page named with a heading in quotes (`docs/findings.md,
  "The committed study"`) must have a heading that begins so.

A path is a candidate when it ends in one of the extensions below, or its
first folder is one of the repository's top-level folders or a stage of
orchestrator/. Globs, placeholders in capitals (`NAME`, `DIR`), absolute
paths, URLs and the build tree (`build/`) are not paths of the tree, nor
are the names NOT_OURS lists (other projects' files, what a build makes,
the examples' own files).

Also checks DESIGN.md section 2's tree: every folder of orchestrator/ and
trainer/ (and common/) is in it, and every folder it lists exists.

Usage: paths_test.py SOURCE_DIR
"""
import os
import pathlib
import re
import subprocess
import sys

EXTENSIONS = ("h", "cc", "c", "py", "sh", "md", "sql", "toml", "cmake", "gp",
              "json", "tex", "csv", "tsv", "html", "png", "svg", "db", "txt")
EXTENSION = re.compile(r"\.(%s)$" % "|".join(EXTENSIONS))
# Names that are not files of this tree, each for its reason; a path
# that starts with one ending in "/" is one too.
NOT_OURS = {
    # other projects' files, named as what the code follows
    "mpi.h", "libssh/libssh.h", "nbc_iallreduce.c", "compare.py",
    # what the build or an install makes
    "orchestrator/dmlbench", "trainer/dmlbench-trainer", "trainer/dmlbench-linkprobe",
    "share/dmlbench/reports/report.toml",
    # a user's files and a command's output in the examples
    "experiments/sweep.toml", "experiments/my-sweep.toml", "experiments/ci.toml",
    "hosts.toml", "ec2.toml", "trainer/missing", "report/", "report/index.html",
    "report/report.md", "ring-and-ps/", "deadline-30s/", "state/",
    "x.gp", "file.cc", "foo_test.cc", "foo_mpitest.cc", "foo_fuzz.cc",
    # the validation matrices where scripts/recommend-validation wrote them
    # once, as the committed database still names them
    "experiments/recommend-validation/",
}




def not_ours(token):
    bare = token.lstrip("./")
    return bare in NOT_OURS or any(
        n.endswith("/") and bare.startswith(n) for n in NOT_OURS)


TOKEN = re.compile(
    r"(?<![\w./:@$-])"                        # not inside a longer word, URL or variable
    r"((?:\.{1,2}/)*[A-Za-z0-9_+-][A-Za-z0-9_.+-]*(?:/[A-Za-z0-9_.+-]+)*/?)"
    r"(?::(\d+)(?:-(\d+))?)?")
# A symbol named with the file that has it: "`PushOrder`, trainer/parameter_server.h",
# "ProfileScope in orchestrator/model/fitting.h".
SYMBOL_AT = re.compile(
    r"`?\b((?:[A-Z][a-z]+[A-Z][A-Za-z0-9_]*|[A-Z][A-Za-z0-9]+)(?:::[A-Za-z_][A-Za-z0-9_]*)?)(?:\(\))?`?"
    r"(?:,| in| of) `?([A-Za-z0-9_/.]+\.(?:h|cc))\b")
BUILD_TREE = re.compile(r"build[\w-]*/")
CAPITALS = re.compile(r"^[A-Z][A-Z0-9]*$")


def placeholder(token, stems):
    """Whether a token stands for a name (`reports/data/NAME.db`, `DIR/x.json`,
    `NNN_name.sql`): it has a word in capitals that no file of the tree has
    as its name (README, DESIGN are names)."""
    for part in re.split(r"[/._-]", token):
        if CAPITALS.match(part) and part not in stems:
            return True
    return False


LINK = re.compile(r"\]\(([^)\s#]*)(?:#([^)\s]+))?\)")


def anchors(text):
    """The anchors GitHub gives a Markdown page's headings: lower case, no
    punctuation but - and _, spaces as -, a repeated one numbered."""
    found, seen = set(), {}
    in_code = False
    for line in text.splitlines():
        if line.startswith("```"):
            in_code = not in_code
        heading = None if in_code else re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not heading:
            continue
        slug = re.sub(r"[^\w\- ]", "", heading.group(1).lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        found.add(slug if count == 0 else f"{slug}-{count}")
    return found


QUOTED_HEADING = re.compile(r"((?:\.\./)*(?:docs/)?[A-Za-z0-9_/.-]+\.md),?\s+\"([^\"]+)\"")


def headings(text):
    """A page's headings in lower case, a numbered one also without its number."""
    found = []
    for line in text.splitlines():
        if re.match(r"^#{1,6}\s", line):
            heading = re.sub(r"^#+\s+", "", line).strip().lower()
            found += [heading, re.sub(r"^\d+\.\s+", "", heading)]
    return found


def quoted_heading_messages(root, f, lines, resolve_page):
    """A page named with a heading in quotes has a heading that begins so;
    the quote may run on to the comment's next line."""
    joined, starts = "", []
    for n, text in lines:
        starts.append((len(joined), n))
        joined += " ".join(text.split()) + " "
    messages = []
    for match in QUOTED_HEADING.finditer(joined):
        page = resolve_page(match.group(1))
        if page is None or not page.is_file() or page.suffix != ".md":
            continue
        quoted = " ".join(match.group(2).split()).lower().rstrip(".,;: ")
        if not any(h.startswith(quoted) for h in headings(page.read_text())):
            n = max(line for start, line in starts if start <= match.start())
            messages.append(f"{f}:{n}: names {match.group(1)}, \"{match.group(2)}\", a heading that page does not have")
    return messages


def link_messages(root, documents):
    """A Markdown link's target exists beside the page, and its anchor is a
    heading of the target."""
    messages = []
    for f in documents:
        for n, line in enumerate((root / f).read_text().splitlines(), 1):
            for link in LINK.finditer(line):
                target, anchor = link.groups()
                if ":" in target:
                    continue  # a URL
                page = (root / f).parent / target if target else root / f
                if not page.exists():
                    messages.append(f"{f}:{n}: links to {target}, which does not exist")
                    continue
                if anchor is None or page.suffix != ".md" or not page.is_file():
                    continue
                if anchor not in anchors(page.read_text()):
                    messages.append(f"{f}:{n}: links to {target or f}#{anchor}, a heading that page does not have")
    return messages


def tracked_files(root):
    """Every file of the tree as a relative path (git's view where it has one)."""
    if (root / ".git").exists():
        out = subprocess.run(
            ["git", "-C", str(root), "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
            check=True, capture_output=True).stdout.decode()
        return sorted({p for p in out.split("\0") if p and (root / p).is_file()})
    found = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(".") and not d.startswith("build")]
        for f in files:
            found.append(str(pathlib.Path(folder, f).relative_to(root)))
    return sorted(found)


def comment_lines(path, text):
    """(line number, text) of what a person reads in the file: a document
    whole, a source's comments only."""
    lines = text.splitlines()
    suffix = path.suffix
    if suffix == ".md":
        yield from enumerate(lines, 1)
        return
    if suffix in (".h", ".cc", ".c"):
        in_block = False
        for n, line in enumerate(lines, 1):
            if in_block:
                end = line.find("*/")
                yield n, line if end < 0 else line[:end]
                in_block = end < 0
                continue
            start = line.find("/*")
            slash = re.search(r"(?<![:\"])//", line)
            if slash and (start < 0 or slash.start() < start):
                yield n, line[slash.end():]
            elif start >= 0:
                end = line.find("*/", start + 2)
                yield n, line[start + 2:] if end < 0 else line[start + 2:end]
                in_block = end < 0
        return
    marker = "--" if suffix == ".sql" else "#"
    for n, line in enumerate(lines, 1):
        at = line.find(marker)
        if at >= 0 and (at == 0 or line[at - 1].isspace()) and not line.startswith("#!"):
            yield n, line[at + len(marker):]


def candidates(text, top_folders):
    """(path, first line, last line) of each name in a text that is meant
    as a path of the tree."""
    for match in TOKEN.finditer(text):
        token, first, last = match.group(1).rstrip("."), match.group(2), match.group(3)
        bare = re.sub(r"^(\.{1,2}/)+", "", token)
        if not bare or "*" in token or BUILD_TREE.match(bare):
            continue
        end = match.end(1)
        if end < len(text) and text[end] in "*<{":
            continue  # a glob or a template: experiments/*.toml, NAME<...>
        extension = EXTENSION.search(bare)
        if "/" in bare or token.startswith(("./", "../")):
            if bare.split("/")[0] in top_folders or extension:
                yield token, first, last
        elif extension and (first is not None or extension.group(1) in ("h", "cc", "py", "sh", "sql", "gp")):
            yield token, first, last


def resolve(root, naming, token, names):
    """The existing file or folder a token names, or None."""
    if not_ours(token):
        return "not ours"
    bare = token.rstrip("/")
    if "/" not in bare and not token.endswith("/") and not bare.startswith("."):
        return names.get(bare)
    bases = []
    folder = (root / naming).parent
    while True:
        bases.append(folder)
        if folder == root or token.startswith(("./", "../")):
            break  # a path from the file's own folder is read from there only
        folder = folder.parent
    if not token.startswith(("./", "../")):
        bases += [root / "orchestrator", root / "trainer", root / "tests"]
    for base in bases:
        path = (base / bare).resolve()
        if path.exists():
            return path
        if path.suffix == ".db" and path.with_name(path.name + ".tar.xz").exists():
            return path.with_name(path.name + ".tar.xz")
        # a module named without its extension: orchestrator/core/link_text
        if not token.endswith("/") and path.parent.is_dir() and any(path.parent.glob(path.name + ".*")):
            return path.parent
    return None


def stale_paths(root):
    files = tracked_files(root)
    names = {}
    for f in files:
        names.setdefault(pathlib.PurePath(f).name, root / f)
    stems = {pathlib.PurePath(f).name.split(".")[0] for f in files}
    top_folders = {f.split("/")[0] for f in files if "/" in f}
    top_folders |= {f.split("/")[1] for f in files if f.startswith("orchestrator/") and f.count("/") > 1}
    documents = [f for f in files if f.endswith(".md") and (
        "/" not in f or f == "reports/README.md" or f.startswith(("docs/", "schemas/", "bench/")))]
    sources = [f for f in files if f.startswith(
        ("orchestrator/", "trainer/", "common/", "tests/", "scripts/", "bench/", "cmake/", "schemas/migrations/"))
        and not f.startswith("tests/fuzz/corpus/")
        and (pathlib.PurePath(f).suffix in (".h", ".cc", ".c", ".py", ".sh", ".sql", ".cmake", ".txt", ".gp")
             or f.startswith("scripts/"))]
    messages = link_messages(root, documents)
    for f in documents + sources:
        text = (root / f).read_text(errors="replace")

        def resolve_page(token, f=f):
            found = resolve(root, f, token, names)
            return None if found in (None, "not ours") else pathlib.Path(found)
        if f not in documents:
            messages += quoted_heading_messages(root, f, list(comment_lines(pathlib.PurePath(f), text)), resolve_page)
        for n, line in comment_lines(pathlib.PurePath(f), text):
            if f in documents:
                line = LINK.sub("]", line)  # link targets are link_messages' to check
            for symbol_at in SYMBOL_AT.finditer(line):
                symbol, token = symbol_at.groups()
                if not re.search(r"[a-z][A-Z]|::", symbol):
                    continue  # one capitalised word is prose, not a symbol
                found = resolve(root, f, token, names)
                if found not in (None, "not ours") and pathlib.Path(found).is_file():
                    name = symbol.split("::")[-1]
                    if not re.search(r"\b%s\b" % re.escape(name), pathlib.Path(found).read_text(errors="replace")):
                        messages.append(f"{f}:{n}: names {symbol} in {token}, which does not have it")
            for token, first, last in candidates(line, top_folders):
                found = resolve(root, f, token, names)
                where = f"{f}:{n}"
                if found is None and placeholder(token, stems):
                    continue
                if found is None:
                    messages.append(f"{where}: names {token}, which does not exist")
                    continue
                if first is None or found == "not ours" or not pathlib.Path(found).is_file():
                    continue
                count = len(pathlib.Path(found).read_text(errors="replace").splitlines())
                for number in (first, last):
                    if number is not None and not 1 <= int(number) <= count:
                        messages.append(
                            f"{where}: names {token}:{number}, but {token} has {count} lines")
    return messages


def design_tree(root):
    """The folders DESIGN.md section 2's tree lists, as repository paths."""
    text = (root / "DESIGN.md").read_text()
    section = re.search(r"^## 2\. .*?^```\n(.*?)^```", text, re.S | re.M)
    if not section:
        return None
    listed = []
    parents = []  # (indent, path) of the entries with a folder of the tree
    for line in section.group(1).splitlines():
        stripped = re.sub(r"^[\s└├│─]*", "", line)
        if not stripped:
            continue
        indent = len(line) - len(stripped)
        token = stripped.split()[0]
        while parents and parents[-1][0] >= indent:
            parents.pop()
        if "/" in token.rstrip("/") or token.endswith("/") and not parents:
            path = token.rstrip("/")
        elif token.endswith("/") and parents:
            path = parents[-1][1] + "/" + token.rstrip("/")
        else:
            continue
        if "*" in path:
            continue
        listed.append(path)
        parents.append((indent, path))
    return listed


def tree_messages(root):
    listed = design_tree(root)
    if listed is None:
        return ["DESIGN.md: section 2 has no tree (a ``` block)"]
    messages = [f"DESIGN.md section 2 lists {p}/, which is not a folder" for p in listed
                if not (root / p).is_dir()]
    listed = {"/".join(p.split("/")[:i]) for p in listed for i in range(1, p.count("/") + 2)}
    folders = set()
    for f in tracked_files(root):
        parts = f.split("/")[:-1]
        if parts and parts[0] in ("orchestrator", "trainer", "common"):
            for i in range(1, len(parts) + 1):
                folders.add("/".join(parts[:i]))
    messages += [f"DESIGN.md section 2's tree lacks {p}/" for p in sorted(folders - listed)]
    return messages


def main():
    root = pathlib.Path(sys.argv[1]).resolve()
    messages = list(dict.fromkeys(stale_paths(root) + tree_messages(root)))
    for m in messages:
        print(m)
    if messages:
        print(f"{len(messages)} stale names")
        return 1
    print("every path a document or a comment names exists; DESIGN.md's tree is the tree's folders")
    return 0


if __name__ == "__main__":
    sys.exit(main())
