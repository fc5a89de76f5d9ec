#!/usr/bin/env python3
"""Every command of the manual runs as written.

Reads the `sh` and `console` code blocks of README.md and of docs/*.md
and checks each command line:

- `dmlbench ...`: every subcommand is one that `dmlbench ... --help` lists,
  and every option one that the command or a command above it lists
  (dmlbench lets options fall through to the command above);
- `dmlbench-trainer ...` (also under mpirun): every option is one that
  `dmlbench-trainer --help` lists;
- `scripts/NAME`: the script exists and is executable;
- a `console` block whose command reads a committed database
  (`dmlbench --db reports/data/NAME.db query ...`, `dmlbench compare
  reports/data/A.db reports/data/B.db ...`) is run, and what it prints must be
  the block's output, line for line (the committed databases' directory
  written `reports/data/`); `compare` may exit 1, a gate's FAIL;
- README's Quick start is exactly `scripts/quickstart` and `scripts/test`.

Usage: commands_test.py SOURCE_DIR DMLBENCH TRAINER DATA_DIR
DATA_DIR is where the committed databases are read from (reports/data of
the source tree); a command's `reports/data/` is read from there.
"""
import pathlib
import re
import shlex
import subprocess
import sys

source, dmlbench, trainer, data_dir = (pathlib.Path(a) for a in sys.argv[1:5])
failures = []


def fail(where, message):
    failures.append(f"{where}: {message}")


def blocks(path):
    """(language, first line number, lines) of each fenced block."""
    lines = path.read_text().splitlines()
    i = 0
    while i < len(lines):
        opening = re.match(r"^```(\w*)\s*$", lines[i])
        if not opening:
            i += 1
            continue
        start = i + 1
        j = start
        while j < len(lines) and lines[j] != "```":
            j += 1
        yield opening.group(1), start + 1, lines[start:j]
        i = j + 1


def strip_comment(line):
    """The line without a shell comment (a # outside quotes, after a space)."""
    quote = None
    for k, c in enumerate(line):
        if quote:
            if c == quote:
                quote = None
        elif c in "'\"":
            quote = c
        elif c == "#" and (k == 0 or line[k - 1].isspace()):
            return line[:k].rstrip()
    return line


def balanced(text):
    try:
        shlex.split(text)
        return True
    except ValueError:
        return False


def commands(language, first, lines):
    """(line number, command text, output lines) of a block."""
    if language == "sh":
        k = 0
        while k < len(lines):
            number, text = first + k, strip_comment(lines[k])
            while (text.endswith("\\") or not balanced(text)) and k + 1 < len(lines):
                k += 1
                text = (text[:-1] if text.endswith("\\") else text) + " " + strip_comment(lines[k]).strip()
            k += 1
            if text.strip():
                for part in re.split(r"\s*(?:&&|;)\s*", text.strip()):
                    yield number, part, None
    elif language == "console":
        k = 0
        while k < len(lines):
            if not lines[k].startswith("$ "):
                k += 1
                continue
            number, text = first + k, lines[k][2:]
            while not balanced(text) and k + 1 < len(lines):
                k += 1
                text += "\n" + lines[k]
            k += 1
            output = []
            while k < len(lines) and not lines[k].startswith("$ "):
                output.append(lines[k])
                k += 1
            while output and not output[-1].strip():
                output.pop()
            yield number, text, output


help_cache = {}


def help_of(program, path):
    key = (str(program), tuple(path))
    if key not in help_cache:
        run = subprocess.run([str(program), *path, "--help"], capture_output=True, text=True)
        help_cache[key] = run.stdout if run.returncode == 0 else None
    return help_cache[key]


def options_and_subcommands(text):
    options, subcommands, section = set(), set(), None
    for line in text.splitlines():
        if re.match(r"^\S.*:$", line):
            section = line[:-1]
            continue
        entry = re.match(r"^  (\S+)", line)
        if not entry:
            continue
        if section == "Options" or section.endswith("Options"):
            for name in entry.group(1).split(","):
                name = re.sub(r"\{.*\}$", "", name.split("=")[0])
                if name.startswith("-"):
                    options.add(name)
        elif section == "Subcommands":
            subcommands.add(entry.group(1))
    return options, subcommands


def option_name(word):
    return word.split("=", 1)[0]


def check_dmlbench(where, words):
    path, known = [], set()
    text = help_of(dmlbench, path)
    options, subcommands = options_and_subcommands(text)
    known |= options
    for word in words:
        if word.startswith("-") and word != "-":
            if option_name(word) not in known:
                fail(where, f"dmlbench {' '.join(path)} has no option {option_name(word)}")
        elif word in subcommands:
            path.append(word)
            text = help_of(dmlbench, path)
            if text is None:
                fail(where, f"dmlbench {' '.join(path)} --help fails")
                return
            options, subcommands = options_and_subcommands(text)
            known |= options
    if not path:
        fail(where, "names no dmlbench subcommand")
    elif subcommands:
        fail(where, f"dmlbench {' '.join(path)} needs one of {sorted(subcommands)}")


def check_trainer(where, words):
    options, _ = options_and_subcommands(help_of(trainer, []))
    for word in words:
        if word.startswith("--") and option_name(word) not in options:
            fail(where, f"dmlbench-trainer has no option {option_name(word)}")


def run_console(where, text, expected, statuses=(0,)):
    words = [w.replace("reports/data/", f"{data_dir}/", 1) if w.startswith("reports/data/") else w
             for w in shlex.split(text)]
    run = subprocess.run([str(dmlbench), *words[1:]], capture_output=True, text=True, cwd=source)
    if run.returncode not in statuses:
        fail(where, f"exits {run.returncode}: {run.stderr.strip()}")
        return
    printed = run.stdout.replace(f"{data_dir}/", "reports/data/")
    got = [line.rstrip() for line in printed.rstrip("\n").splitlines()]
    want = [line.rstrip() for line in expected]
    if got != want:
        fail(where, "prints something else than the page shows:\n" +
             "\n".join(f"  page: {w}\n  runs: {g}" for w, g in zip(want, got) if w != g) +
             (f"\n  ({len(want)} lines on the page, {len(got)} printed)" if len(want) != len(got) else ""))


def check(path):
    relative = path.relative_to(source)
    checked = 0
    for language, first, lines in blocks(path):
        if language not in ("sh", "console"):
            continue
        for number, text, output in commands(language, first, lines):
            where = f"{relative}:{number}"
            try:
                words = shlex.split(text)
            except ValueError as error:
                fail(where, f"does not parse as a shell command ({error}): {text}")
                continue
            while words and re.match(r"^[A-Z_]+=", words[0]):  # VAR=value before the command
                words.pop(0)
            if not words:
                continue
            program = words[0]
            if program in ("dmlbench", "build/orchestrator/dmlbench"):
                check_dmlbench(where, words[1:])
                committed = any(w.startswith("reports/data/") for w in words)
                if language == "console" and output and committed and "--db" in words and "query" in words:
                    run_console(where, text, output)
                elif language == "console" and output and committed and "compare" in words:
                    run_console(where, text, output, statuses=(0, 1))
                checked += 1
            elif program == "mpirun" and any(w.endswith("dmlbench-trainer") for w in words):
                at = next(i for i, w in enumerate(words) if w.endswith("dmlbench-trainer"))
                check_trainer(where, words[at + 1:])
                checked += 1
            elif program.startswith("scripts/"):
                script = source / program
                if not (script.is_file() and script.stat().st_mode & 0o111):
                    fail(where, f"{program} is not an executable script of the tree")
                checked += 1
    return checked


pages = [source / "README.md"] + sorted((source / "docs").glob("*.md"))
total = sum(check(page) for page in pages)

readme = (source / "README.md").read_text()
quick = re.search(r"^## Quick start\n(.*?)^## ", readme, re.S | re.M)
quick_blocks = re.findall(r"^```sh\n(.*?)^```", quick.group(1) if quick else "", re.S | re.M)
quick_commands = [strip_comment(line).strip() for line in (quick_blocks[0] if quick_blocks else "").splitlines()]
if quick_commands != ["scripts/quickstart", "scripts/test"]:
    fail("README.md", f"the Quick start's commands are {quick_commands}, not scripts/quickstart and scripts/test")

if total < 20:
    fail("docs", f"only {total} commands found: the extraction is broken")
for failure in failures:
    print(failure)
if failures:
    sys.exit(1)
print(f"{total} commands in {len(pages)} pages name what dmlbench, its trainer and scripts/ have")
