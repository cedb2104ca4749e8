"""Runs one page's blocks in order (python in one namespace, sh through bash) and prints
each block's output as JSON: `python run_page.py BLOCKS.json`."""

from __future__ import annotations

import contextlib
import io
import json
import subprocess
import sys
import traceback


def main(path: str) -> None:
    with open(path, encoding="utf-8") as f:
        steps = json.load(f)
    namespace: dict[str, object] = {"__name__": "__main__"}
    results = []
    for step in steps:
        out = io.StringIO()
        ok = True
        if step["lang"] == "python":
            with contextlib.redirect_stdout(out):
                try:
                    exec(compile(step["code"], f"{step['page']}:{step['line']}", "exec"),
                         namespace)
                except BaseException:
                    ok = False
                    out.write(traceback.format_exc())
        else:
            script = step["code"].replace("\\\n", " ")
            for line in script.splitlines():
                line = line.strip()
                if not line or line.startswith("#"):
                    continue
                if line.startswith("handoffs "):
                    line = f"{sys.executable} -m handoffs.cli {line[len('handoffs '):]}"
                done = subprocess.run(["bash", "-c", line], capture_output=True, text=True,
                                      timeout=120)
                out.write(done.stdout)
                if done.returncode != 0:
                    ok = False
                    out.write(f"[exit {done.returncode}] {done.stderr}")
                    break
        results.append({"ok": ok, "output": out.getvalue()})
    print(json.dumps(results))


if __name__ == "__main__":
    main(sys.argv[1])
