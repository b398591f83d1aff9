#!/usr/bin/env python3
"""The documents' checks that need no server (test/docs/run.sh runs them).

  check.py links ROOT          every relative link and #anchor in the Markdown documents
                               resolves to a file and a heading that exist (GitHub's anchors),
                               and every page of docs/ over 150 lines has a Contents heading
  check.py api ROOT < NAMES    every name on stdin (one installed function, procedure or view
                               a line) has an entry in docs/sql-api.md, and every entry names
                               one of them
  check.py example ROOT KIND   prints the README's worker example of KIND (node, python)

Prints TAP lines ("ok N - ...", "not ok N - ..."); exits 1 when one failed.
"""
import os
import re
import sys

# The documents whose links are checked: the front door, the reference, the
# history, the contributor's guide and every README beside the code and tests.
SKIP_DIRS = {".git", "node_modules", "build", "results", "tmp_check", "output_iso", "log",
             "__pycache__", ".deps"}

FENCE = re.compile(r"^\s*(```|~~~)")
# [text](target) and ![alt](target); the target ends at whitespace or ")".
INLINE_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]*)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE_DEF = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$")
HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")


def documents(root):
    found = []
    for top in ("README.md", "CHANGELOG.md", "CONTRIBUTING.md"):
        if os.path.isfile(os.path.join(root, top)):
            found.append(top)
    for folder in ("docs", "src", "bench", "test", "clients", "examples", "contrib"):
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, folder)):
            dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
            for name in sorted(filenames):
                if name.endswith(".md"):
                    found.append(os.path.relpath(os.path.join(dirpath, name), root))
    return found


def prose_lines(text):
    """The document's lines outside fenced code blocks, as (line number, line)."""
    inside = None
    for number, line in enumerate(text.split("\n"), 1):
        m = FENCE.match(line)
        if m:
            if inside is None:
                inside = m.group(1)
            elif m.group(1) == inside:
                inside = None
            continue
        if inside is None:
            yield number, line


def slug(heading):
    """A heading's anchor as GitHub makes it: the text as rendered (no code
    marks, links reduced to their text, no emphasis marks, no HTML), lower
    case, every character that is not a letter, a digit, "_", "-" or a space
    dropped, then each space a "-"."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    text = re.sub(r"<[^>]+>", "", text)
    text = text.replace("`", "").replace("*", "")
    text = text.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path, cache={}):
    if path not in cache:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        seen = {}
        result = set()
        for _, line in prose_lines(text):
            m = HEADING.match(line)
            if not m:
                continue
            base = slug(m.group(2))
            n = seen.get(base, 0)
            result.add(base if n == 0 else "%s-%d" % (base, n))
            seen[base] = n + 1
        cache[path] = result
    return cache[path]


def links_of(text):
    """(line number, target) of every link outside code: inline links, whose
    text may run over lines, images and reference definitions."""
    lines = text.split("\n")
    prose = dict(prose_lines(text))
    kept = "\n".join(prose.get(i, "") for i in range(1, len(lines) + 1))
    # Code spans may run over lines, never over a paragraph's end; blanked
    # with their newlines kept, so offsets still give line numbers.
    kept = re.sub(r"(`+)(?:(?!\n\s*\n).)+?\1",
                  lambda m: re.sub(r"[^\n]", " ", m.group(0)), kept, flags=re.S)
    for m in INLINE_LINK.finditer(kept):
        yield kept.count("\n", 0, m.start()) + 1, m.group(1)
    for number, line in enumerate(kept.split("\n"), 1):
        m = REFERENCE_DEF.match(line)
        if m:
            yield number, m.group(1)


def check_links(root):
    failures = 0
    for doc in documents(root):
        with open(os.path.join(root, doc), encoding="utf-8") as f:
            text = f.read()
        broken = []
        count = 0
        for number, target in links_of(text):
            if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target) or target.startswith("//"):
                continue  # http:, https:, mailto: ...: not this test's to check
            count += 1
            path, _, anchor = target.partition("#")
            if path:
                full = os.path.normpath(os.path.join(root, os.path.dirname(doc), path))
                if not full.startswith(os.path.normpath(root) + os.sep) and full != os.path.normpath(root):
                    broken.append("%d: %s leaves the repository" % (number, target))
                    continue
                if not os.path.exists(full):
                    broken.append("%d: %s: no such file" % (number, target))
                    continue
            else:
                full = os.path.join(root, doc)
            if anchor:
                if not full.endswith(".md") or os.path.isdir(full):
                    broken.append("%d: %s: an anchor into a file that is not Markdown" % (number, target))
                elif anchor not in anchors(full):
                    broken.append("%d: %s: no heading with that anchor in %s"
                                  % (number, target, os.path.relpath(full, root)))
        # A reference page over 150 lines opens with its contents.
        if doc.startswith("docs" + os.sep) and text.count("\n") > 150 and "contents" not in anchors(os.path.join(root, doc)):
            broken.append("1: %d lines and no Contents heading" % text.count("\n"))
        if broken:
            failures += 1
            print("not ok - %s: %d problems in %d relative links and the contents" % (doc, len(broken), count))
            for b in broken:
                print("#   %s:%s" % (doc, b))
        else:
            print("ok - %s: %d relative links resolve" % (doc, count))
    return failures


# The tables of docs/sql-api.md whose rows are entries: those whose first
# column is headed "function", "procedure / function" or "view".
ENTRY_TABLES = {"function", "procedure / function", "view"}
ENTRY_NAME = re.compile(r"`(?:CALL\s+)?([a-z_][a-z0-9_]*(?:\.[a-z_][a-z0-9_]*)?)(?:\(|`)")


def api_entries(path):
    entries = {}
    header = None
    for number, line in prose_lines(open(path, encoding="utf-8").read()):
        if not line.startswith("|"):
            header = None
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if header is None:
            header = cells[0].lower()
            continue
        if set(cells[0]) <= set("-: "):
            continue
        if header in ENTRY_TABLES:
            for name in ENTRY_NAME.findall(cells[0]):
                entries.setdefault(name, number)
    return entries


def check_api(root):
    path = os.path.join(root, "docs", "sql-api.md")
    installed = sorted({l.strip() for l in sys.stdin if l.strip()})
    entries = api_entries(path)
    failures = 0
    # A parser that reads nothing proves nothing.
    if len(installed) >= 50 and len(entries) >= 50:
        print("ok - %d installed objects, %d entries in docs/sql-api.md" % (len(installed), len(entries)))
    else:
        failures += 1
        print("not ok - too few names: %d installed, %d entries" % (len(installed), len(entries)))
    missing = [name for name in installed if name not in entries]
    if missing:
        failures += 1
        print("not ok - every installed function, procedure and view has an entry in docs/sql-api.md")
        for name in missing:
            print("#   no entry for %s" % name)
    else:
        print("ok - every installed function, procedure and view has an entry in docs/sql-api.md")
    stale = sorted(name for name in entries if name not in installed)
    if stale:
        failures += 1
        print("not ok - every entry in docs/sql-api.md names an installed object")
        for name in stale:
            print("#   docs/sql-api.md:%d: %s is not installed" % (entries[name], name))
    else:
        print("ok - every entry in docs/sql-api.md names an installed object")
    return failures


# The README's workers: the fenced block whose first line names the file.
EXAMPLES = {"node": "// worker.mjs", "python": "# worker.py"}


def example(root, kind):
    text = open(os.path.join(root, "README.md"), encoding="utf-8").read()
    for block in re.findall(r"^```[a-z]*\n(.*?)^```", text, re.M | re.S):
        if block.startswith(EXAMPLES[kind]):
            sys.stdout.write(block)
            return 0
    sys.stderr.write("check.py: README.md has no block starting with %r\n" % EXAMPLES[kind])
    return 1


def main():
    if len(sys.argv) < 3:
        sys.stderr.write(__doc__)
        return 2
    mode, root = sys.argv[1], os.path.abspath(sys.argv[2])
    if mode == "links":
        return 1 if check_links(root) else 0
    if mode == "api":
        return 1 if check_api(root) else 0
    if mode == "example" and len(sys.argv) == 4 and sys.argv[3] in EXAMPLES:
        return example(root, sys.argv[3])
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main())
