#!/usr/bin/env python3
"""prof_vs_mca.py — llvm-mca-19's cycles for a loop body of a code object,
to set next to the emulator profile's model cycles for the same loop.

    tools/bench/prof_vs_mca.py FILE.hsaco MCPU KERNEL BEGIN END

BEGIN/END are the byte offsets from the kernel's entry that the profile
prints for a loop ("loop N (+0x618..+0xce0, ...)").  The instructions in that
range, without its branches, go to llvm-mca-19 -mcpu=MCPU as one straight-line
block, 100 iterations; prints instructions and cycles per iteration (mca's
steady state: consecutive iterations overlap, loads take its fixed latency).
A developer-time oracle, like tools/gen_isa.py: the build never runs it.
"""
import re, subprocess, sys, tempfile

def main():
    if len(sys.argv) != 6:
        sys.exit(__doc__)
    co, mcpu, kernel, begin, end = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4], 0), int(sys.argv[5], 0)
    dis = subprocess.run(["llvm-objdump-19", "-d", "--mcpu=" + mcpu, co], capture_output=True, text=True,
                         check=True).stdout
    entry, body = None, []
    for line in dis.splitlines():
        m = re.match(r"^([0-9a-f]+) <(.+)>:", line)
        if m:
            entry = int(m.group(1), 16) if m.group(2) == kernel else None
            continue
        m = re.match(r"^\s+(\S.*?)\s*//\s*([0-9A-F]+):", line)
        if entry is None or not m:
            continue
        off = int(m.group(2), 16) - entry
        text = m.group(1)
        if begin <= off <= end and not re.match(r"s_(branch|cbranch_\w+|endpgm)\b", text):
            body.append(text)
    if not body:
        sys.exit("no instructions of %s in +0x%x..+0x%x" % (kernel, begin, end))
    with tempfile.NamedTemporaryFile("w", suffix=".s") as f:
        f.write("\n".join(body) + "\n")
        f.flush()
        out = subprocess.run(["llvm-mca-19", "-mtriple=amdgcn-amd-amdhsa", "-mcpu=" + mcpu, "-iterations=100", f.name],
                             capture_output=True, text=True)
    if out.returncode:
        sys.exit(out.stderr)
    cyc = int(re.search(r"Total Cycles:\s+(\d+)", out.stdout).group(1))
    print("%s %s +0x%x..+0x%x: %d instructions, llvm-mca-19 %.1f cycles per iteration" %
          (kernel, mcpu, begin, end, len(body), cyc / 100.0))

main()
