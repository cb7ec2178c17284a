"""A case's two long texts, read from NAME.md beside its module (NAME the module's file name, so
cases/php_fpm.md for php_fpm.py): under `## The write-up`, what the write-up did and saw (the
module's WRITEUP), and under `## Chosen here, not published by the write-up`, the details the lab
chose (INVENTED). They are prose a reader edits, not code; the file is found beside this one, so
loadscripts/case reads it from any working directory."""

import os

HEADINGS = {"## The write-up": "writeup", "## Chosen here, not published by the write-up": "invented"}


def parse(text, where="texts"):
    """{"writeup": ..., "invented": ...} of a case's .md text: each heading's lines up to the next
    heading, without the blank lines around them. A missing or repeated heading is an error."""
    found, key = {}, None
    for line in text.split("\n"):
        if line.startswith("## "):
            key = HEADINGS.get(line.rstrip())
            if key is None or key in found:
                raise ValueError("%s: unknown or repeated heading %r" % (where, line))
            found[key] = []
        elif key is not None:
            found[key].append(line)
    if set(found) != set(HEADINGS.values()):
        raise ValueError("%s: wants the headings %s" % (where, ", ".join(HEADINGS)))
    return {k: "\n".join(v).strip("\n") for k, v in found.items()}


def load(module):
    """(WRITEUP, INVENTED) of the case module named `module` (its __name__)."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), module.rpartition(".")[2] + ".md")
    with open(path, encoding="utf-8") as f:
        texts = parse(f.read(), path)
    return texts["writeup"], texts["invented"]
