#!/usr/bin/env python3
"""The numbers the docs quote about the example kernels match the .tyl files: in every paragraph
of the given Markdown files that names examples/gemm/gemm.tyl or gemm_sm90.tyl, a tile written
`A × B` (or `A × B × C`) followed by "tile(s)" must be the file's BM × BN (× BK), and a stage count
("three-stage", "4 stages", "stages = 4") its STAGES. A paragraph naming both files is not checked
(its numbers could be either's). --self-test first checks that a wrong number is caught.
Usage: docs_numbers.py ROOT FILE.md... | docs_numbers.py --self-test"""
import re
import sys
from pathlib import Path

WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8}
EXAMPLES = ("gemm.tyl", "gemm_sm90.tyl")


def constants(tyl_text):
    return {m.group(1): int(m.group(2)) for m in re.finditer(r"^const (\w+) = (\d+);", tyl_text, re.M)}


def problems(doc_name, text, consts_of):
    """Every claim of a paragraph about one example that its constants contradict."""
    found = []
    for para in re.split(r"\n\s*\n", text):
        named = [e for e in EXAMPLES if re.search(r"(?<![\w_])" + re.escape(e), para)]
        if len(named) != 1:
            continue
        c = consts_of[named[0]]
        line = text.count("\n", 0, text.find(para)) + 1
        for m in re.finditer(r"(\d+) ?[×x] ?(\d+)(?: ?[×x] ?(\d+))? (?:block )?tiles?\b", para):
            want = [c.get("BM"), c.get("BN")] + ([c.get("BK")] if m.group(3) else [])
            got = [int(g) for g in m.groups() if g]
            if got != want:
                found.append(f"{doc_name}:{line}: '{m.group(0)}' about {named[0]}, which has "
                             f"{' × '.join(map(str, want))}")
        for m in re.finditer(r"\b(\d+|" + "|".join(WORDS) + r")[- ]stages?\b|stages = (\d+)", para):
            word = m.group(1) or m.group(2)
            got = int(word) if word.isdigit() else WORDS[word]
            if got != c.get("STAGES"):
                found.append(f"{doc_name}:{line}: '{m.group(0)}' about {named[0]}, which has STAGES = "
                             f"{c.get('STAGES')}")
    return found


def self_test():
    consts = {"gemm.tyl": {"BM": 128, "BN": 256, "BK": 32, "STAGES": 4},
              "gemm_sm90.tyl": {"BM": 128, "BN": 256, "BK": 64, "STAGES": 4}}
    right = "`gemm.tyl` uses 128 × 256 block tiles and a four-stage pipeline (stages = 4)."
    wrong = "[gemm](examples/gemm/gemm.tyl) uses 128 × 128 block tiles and three stages."
    both = "gemm.tyl and gemm_sm90.tyl: 64 × 64 tiles, two stages."
    ok = not problems("right", right, consts) and len(problems("wrong", wrong, consts)) == 2 \
        and not problems("both", both, consts)
    print("self-test", "passed" if ok else "FAILED")
    return ok


if __name__ == "__main__":
    if not self_test():
        sys.exit(1)
    if sys.argv[1:2] == ["--self-test"]:
        sys.exit(0)
    root = Path(sys.argv[1])
    consts_of = {e: constants((root / "examples/gemm" / e).read_text(encoding="utf-8")) for e in EXAMPLES}
    found = []
    for doc in sys.argv[2:]:
        found += problems(doc, Path(doc).read_text(encoding="utf-8"), consts_of)
    for f in found:
        print(f)
    print(f"{len(sys.argv) - 2} files checked, {len(found)} numbers that do not match the examples")
    sys.exit(1 if found else 0)
