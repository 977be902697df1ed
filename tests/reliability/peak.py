"""Run ``prov`` and record its peak resident memory: ``python -m tests.reliability.peak FILE ARGS``.

``wait4``'s ``ru_maxrss`` cannot be used for a child of pytest: Linux carries the forked
parent's high-water mark over the exec, so every child would weigh what pytest weighed. The
kernel's ``VmHWM`` of the process's own (post-exec) memory is exact; it is written to FILE
at exit, before the memory is gone.
"""

from __future__ import annotations

import atexit
import sys
from pathlib import Path


def _record(target: Path) -> None:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            target.write_text(str(int(line.split()[1]) * 1024))  # kB to bytes


if __name__ == "__main__":
    atexit.register(_record, Path(sys.argv[1]))
    sys.argv = ["prov", *sys.argv[2:]]
    from provenance.cli import main

    main()
