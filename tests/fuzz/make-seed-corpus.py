#!/usr/bin/env python3
"""Writes the fuzzer's seed corpus (one file per input, named by its hash) into OUTDIR.

Inputs are in fuzz_compile's format (FuzzHarness.h): a mode byte, then the payload.
  - every .tyl of examples/, tests/file/, tests/consumer/ and tests/fuzz/seeds/, with default
    options ('@'), with every compile option on ('_': stages dumped, -Werror, remarks, sm_90a,
    --no-line, JSON diagnostics), and run on the emulator (' ')
  - every layout expression of tests/fuzz/seeds/layouts.txt and the quoted layouts of the
    unit and CLI tests and docs, alone, with --json --apply, and as a picture with banks
  - the saved regression inputs, except the known-open ones

With --small (what CI's short run uses), only the hand-written seeds of tests/fuzz/seeds, the
layouts, and the regression inputs that compile quickly: under the sanitizers the examples and
the regressions that exercise the size limits take seconds each, which a two-minute run cannot
afford (the ctest fuzz.regression tests replay those).
"""
import hashlib
import pathlib
import re
import sys

root = pathlib.Path(__file__).resolve().parents[2]
small = "--small" in sys.argv[1:]
out = pathlib.Path([a for a in sys.argv[1:] if a != "--small"][0])
out.mkdir(parents=True, exist_ok=True)
count = 0


def emit(data: bytes):
    global count
    (out / hashlib.sha1(data).hexdigest()).write_bytes(data)
    count += 1


sources = []
patterns = ["examples/**/*.tyl", "tests/file/**/*.tyl", "tests/consumer/**/*.tyl", "tests/fuzz/seeds/*.tyl"]
for pattern in patterns[3:] if small else patterns:
    sources += sorted(root.glob(pattern))
for path in sources:
    text = path.read_bytes()
    emit(b"@" + text)
    emit(b"_" + text)
    emit(b" " + text)

layouts = set()
for line in (root / "tests/fuzz/seeds/layouts.txt").read_text().splitlines():
    if line.strip() and not line.startswith("#"):
        layouts.add(line)
quoted = re.compile(r"""["']([^"'\n]*(?:S\[|R\[|ComposeLayout|Swizzle)[^"'\n]*)["']""")
for pattern in ["tests/unit/*.cpp", "tests/e2e/*.cpp", "docs/*.md", "README.md", "scripts/*.sh"]:
    for path in sorted(root.glob(pattern)):
        for m in quoted.finditer(path.read_text(errors="replace")):
            layouts.add(m.group(1).replace('\\"', '"'))
for expr in sorted(layouts):
    e = expr.encode()
    emit(b"L" + e)
    emit(b"L" + e + b"\njson\napply 0,0")
    emit(b"L" + e + b"\nsvg\ndtype f16\nhighlight ldmatrix:0,8")

# Known-open bugs are left out: the fuzzer would stop at them instead of exploring.
known_open = set()
for line in (root / "tests/fuzz/regressions/KNOWN_OPEN.txt").read_text().splitlines():
    fields = line.split("#")[0].split()
    if fields:
        known_open.add(fields[0])
for path in sorted((root / "tests/fuzz/regressions").glob("*")):
    if path.name in ("KNOWN_OPEN.txt", "README.md") or path.name in known_open:
        continue
    if small and path.name.startswith(("memory-blowup-", "slow-", "output-blowup-")):
        continue
    data = path.read_bytes()
    if path.suffix == ".tyl":
        data = b"@" + data
    elif path.suffix == ".layout":
        data = b"L" + data
    emit(data)

print(f"{count} seed inputs in {out}")
