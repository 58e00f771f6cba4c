#!/usr/bin/env python3
"""Every ```tyl block of the given Markdown files is a complete .tyl file that `tyloc check`
accepts without warnings, unless it carries a comment `error [ID]`: then tyloc must reject it
(exit 1) with a diagnostic of that ID; or `warning [ID]`: then it must warn with that ID. A line
`// tyloc check --arch sm_90a` in a block checks it for that architecture. An example that runs
one thread a block over a grid of many blocks (`launch(grid = n, block = 1)`) is a pattern nobody
should copy, and is refused.
Usage: docs_examples.py TYLOC FILE.md..."""
import re
import subprocess
import sys
import tempfile
from pathlib import Path

tyloc, docs = sys.argv[1], sys.argv[2:]
failures = 0
checked = 0
with tempfile.TemporaryDirectory() as tmp:
    for doc in docs:
        text = Path(doc).read_text(encoding="utf-8")
        for match in re.finditer(r"```tyl\n(.*?)```", text, re.S):
            line = text.count("\n", 0, match.start()) + 1
            source = match.group(1)
            path = Path(tmp) / f"block{checked}.tyl"
            path.write_text(source, encoding="utf-8")
            checked += 1
            arch = re.search(r"^// tyloc check --arch (sm_\w+)$", source, re.M)
            flags = ["--arch", arch.group(1)] if arch else []
            result = subprocess.run([tyloc, "check", str(path), *flags], capture_output=True, text=True)
            expected = set(re.findall(r"error \[([a-z-]+)\]", source))
            got = set(re.findall(r"error: .* \[([a-z-]+)\]$", result.stderr, re.M))
            warned = set(re.findall(r"warning: .* \[([a-z-]+)\]$", result.stderr, re.M))
            allowed = set(re.findall(r"warning \[([a-z-]+)\]", source))
            ok = result.returncode == 0 and not got if not expected else result.returncode == 1 and expected <= got
            ok = ok and (warned == allowed if not expected else True)
            lone = [g for g in re.findall(r"launch\(grid = (.*?), block = 1\)", source) if g.strip() != "1"]
            if lone:
                failures += 1
                print(f"{doc}:{line}: one thread a block over grid = {lone[0]}: use a block of threads")
                continue
            if not ok:
                failures += 1
                print(f"{doc}:{line}: expected {sorted(expected) or 'success'}, tyloc exited "
                      f"{result.returncode}:\n{result.stderr}")
print(f"{checked} examples checked, {failures} wrong")
sys.exit(1 if failures or checked == 0 else 0)
