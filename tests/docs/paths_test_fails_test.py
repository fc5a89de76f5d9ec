#!/usr/bin/env python3
"""paths_test.py fails, naming each one, on the stale names it is there for:
a document's link or path that is gone, a line beyond its file's end, a
heading its page does not have (a link's anchor, or a heading in quotes
after the page's name), a symbol its file does not have, a comment's stage
path that is gone, a folder missing from DESIGN.md's tree and one the tree
lists that is gone; and passes on the same tree once they are mended.

Usage: paths_test_fails_test.py PATHS_TEST
"""
import pathlib
import subprocess
import sys
import tempfile

checker = pathlib.Path(sys.argv[1]).resolve()

DESIGN = """# design

## 2. The data flow is the tree

```
experiments/*.toml
  └─ orchestrator/run        the run loop
     orchestrator/vanished   a stage that was removed
     orchestrator/launch     where ranks run
        cluster/             the emulated cluster
     trainer/ (mpirun)       the schemes
```
"""

FILES = {
    "README.md": "Read [the model](docs/gone.md) and `orchestrator/run/runner.cc:3`;\n"
                 "`docs/model.md` and `reports/data/NAME.db` are fine; [fits](docs/model.md#fitting-a-model).\n",
    "docs/model.md": "# The model\n\nSee [the design](../DESIGN.md), `bench/run.sh` and [fits](fits.md).\n\n## Fitting\n",
    "bench/run.sh": "#!/bin/sh\n# runs orchestrator/run/runner.cc's loop\n",
    "orchestrator/run/runner.cc": "// Runner: its hosts come up as SetUpHost in launch/cluster/netns.h.\nint x;\n",
    "orchestrator/launch/cluster/netns.h": "// the links are launch/cluster/links.h's\nint y;\n",
    "orchestrator/model/physics.h": "// counts, as trainer/exchange.h sends\n",
    "trainer/exchange.h": "// Exchange: its schemes are judged as docs/model.md,\n// \"Judging\" says\n",
}

EXPECTED = """README.md:1: links to docs/gone.md, which does not exist
README.md:2: links to docs/model.md#fitting-a-model, a heading that page does not have
docs/model.md:3: links to fits.md, which does not exist
DESIGN.md:8: names orchestrator/vanished, which does not exist
README.md:1: names orchestrator/run/runner.cc:3, but orchestrator/run/runner.cc has 2 lines
orchestrator/launch/cluster/netns.h:1: names launch/cluster/links.h, which does not exist
orchestrator/run/runner.cc:1: names SetUpHost in launch/cluster/netns.h, which does not have it
trainer/exchange.h:1: names docs/model.md, "Judging", a heading that page does not have
DESIGN.md section 2 lists orchestrator/vanished/, which is not a folder
DESIGN.md section 2's tree lacks orchestrator/model/
10 stale names
"""


def run(root):
    return subprocess.run([sys.executable, str(checker), str(root)], capture_output=True, text=True)


with tempfile.TemporaryDirectory() as folder:
    root = pathlib.Path(folder)
    for name, text in {**FILES, "DESIGN.md": DESIGN}.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    stale = run(root)
    failures = []
    if stale.returncode != 1 or stale.stdout != EXPECTED:
        failures.append(f"on the stale tree: exit {stale.returncode}, printed\n{stale.stdout}{stale.stderr}"
                        f"instead of exit 1 and\n{EXPECTED}")

    (root / "README.md").write_text(FILES["README.md"].replace("docs/gone.md", "docs/model.md")
                                    .replace("runner.cc:3", "runner.cc:2").replace("#fitting-a-model", "#fitting"))
    (root / "orchestrator/launch/cluster/netns.h").write_text("// the links are launch/cluster/links.h's\n"
                                                              "void SetUpHost();\n")
    (root / "orchestrator/launch/cluster/links.h").write_text("// Links\n")
    (root / "docs/fits.md").write_text("# Fits\n")
    (root / "trainer/exchange.h").write_text(FILES["trainer/exchange.h"].replace("Judging", "Fitting"))
    (root / "DESIGN.md").write_text(DESIGN.replace("orchestrator/vanished", "orchestrator/model   "))
    mended = run(root)
    if mended.returncode != 0:
        failures.append(f"on the mended tree: exit {mended.returncode}, printed\n{mended.stdout}{mended.stderr}")

for f in failures:
    print(f)
if not failures:
    print("paths_test.py names every stale path of a planted tree and passes it mended")
sys.exit(1 if failures else 0)
