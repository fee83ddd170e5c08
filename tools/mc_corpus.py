#!/usr/bin/env python3
"""mc_corpus.py: tileasm's assembler and disassembler against LLVM's own MC tests.

    tools/mc_corpus.py [--tileasm build/tools/tileasm] [--llvm-mc llvm-mc-19]
                       [--list CLASS] [--families] DIR...

DIR holds LLVM's AMDGPU MC test files (llvm/test/MC/AMDGPU/*.s and
llvm/test/MC/Disassembler/AMDGPU/*.txt of a release-19 checkout, anywhere
outside the project: they are read, never copied in).  Each file is run
under every RUN line whose -mcpu is one of tileasm's targets (gfx1100-gfx1103
count as gfx1100, gfx940/941/942 as gfx942, the generic gfx900-gfx90c files as
both gfx90a and gfx942) and with that RUN line's -mattr.
llvm-mc-19 with the same options is the oracle, so a line is valid when
llvm-mc-19 encodes it and invalid when it rejects it, whatever the CHECK
lines of a later LLVM say.

Assembler (.s), per instruction line:
  matched           same bytes as llvm-mc-19 (text: see printed-differently)
  mis-encoded       tileasm accepted it and wrote other bytes
  rejected          llvm-mc-19 encodes it, tileasm reports an error
  invalid-accepted  llvm-mc-19 rejects it, tileasm encodes it
  printed-differently  matched bytes, but tileasm prints other text
Disassembler (.txt), per line of bytes:
  same / not-decoded / decoded-differently / invalid-decoded (llvm-mc-19
  warns "invalid instruction encoding", tileasm prints an instruction)
RUN lines with an -mattr tileasm has no mode for (+real-true16, ...) are
counted under "mode" and not compared.

--list CLASS prints the lines of a class (rejected, mis-encoded, ...) with
the file, both tools' answers; --families groups the rejected lines by
mnemonic suffix/family.  Exit status 1 if anything is mis-encoded, accepted
while invalid, decoded differently or decoded while invalid.
"""
import argparse
import collections
import os
import re
import subprocess
import sys
import tempfile

TARGETS = {"gfx1100": ["gfx1100"], "gfx1101": ["gfx1100"], "gfx1102": ["gfx1100"], "gfx1103": ["gfx1100"],
           "gfx90a": ["gfx90a"], "gfx940": ["gfx942"], "gfx941": ["gfx942"], "gfx942": ["gfx942"]}
# The generic gfx9 files (gfx9_asm_*.s, vop_sdwa.s, ...) run for gfx900-gfx90c: they hold most of the
# gfx9 ISA, so they count for both gfx90a and gfx942 (llvm-mc-19 for that target still decides validity).
for _c in ("gfx900", "gfx902", "gfx904", "gfx906", "gfx908", "gfx909", "gfx90c"):
    TARGETS[_c] = ["gfx90a", "gfx942"]
# -mattr features that do not change what tileasm's default mode accepts.
NEUTRAL = {"+wavefrontsize32", "-wavefrontsize64", "-real-true16", "+xnack", "-xnack", "+sramecc",
           "-sramecc", "+wavefrontsize64", "-wavefrontsize32"}

ENC_RE = re.compile(r"^\s*(.*?)\s*;\s*encoding:\s*\[([^\]]*)\]")
ERR_RE = re.compile(r"^[^:]*:(\d+):\d+: error:")
WARN_RE = re.compile(r"^[^:]*:(\d+):\d+: warning: invalid instruction encoding")


def run(cmd, stdin_path=None):
    f = open(stdin_path) if stdin_path else None
    try:
        p = subprocess.run(cmd, stdin=f, capture_output=True, text=True, errors="replace")
    finally:
        if f:
            f.close()
    return p.stdout, p.stderr


def configs(text):
    """(target, wave64, mode) per llvm-mc RUN line naming one of our targets."""
    out = []
    for m in re.finditer(r"RUN:(.*)", text):
        run_line = m.group(1)
        if "llvm-mc" not in run_line or "amdgcn" not in run_line:
            continue
        cpu = re.search(r"-mcpu[= ](\S+)", run_line)
        if not cpu or cpu.group(1) not in TARGETS:
            continue
        attrs = []
        for a in re.findall(r"-mattr[= ](\S+)", run_line):
            attrs += [x for x in a.split(",") if x]
        other = sorted(a for a in attrs if a not in NEUTRAL)
        disasm = "-disassemble" in run_line or "--disassemble" in run_line
        for tgt in TARGETS[cpu.group(1)]:
            w64 = "+wavefrontsize64" in attrs or (tgt != "gfx1100")
            cfg = (tgt, w64, ",".join(other), disasm)
            if cfg not in out:
                out.append(cfg)
    return out


def asm_lines(text):
    """{line number: instruction text} of a .s test file."""
    lines = {}
    for i, raw in enumerate(text.split("\n"), 1):
        s = raw.split("//")[0].split(";")[0].strip()
        if not s or s.startswith((".", "#")) or re.match(r"^[\w.$]+:\s*$", s):
            continue
        lines[i] = s
    return lines


def hex_lines(text):
    """{line number: bytes} of a Disassembler .txt test file."""
    lines = {}
    for i, raw in enumerate(text.split("\n"), 1):
        s = raw.split("#")[0].split("//")[0].split(";")[0].strip()
        if not s:
            continue
        toks = re.findall(r"0x[0-9a-fA-F]{1,2}\b", s)
        if toks:
            lines[i] = bytes(int(t, 16) for t in toks)
    return lines


def write_numbered(path, lines, total):
    with open(path, "w") as f:
        for i in range(1, total + 1):
            f.write(lines.get(i, "") + "\n")


def encodings(listing):
    out = []
    for l in listing.split("\n"):
        m = ENC_RE.match(l)
        if m:
            out.append((m.group(1).strip(), m.group(2).replace(" ", "")))
    return out


def assemble_all(cmd_for, lines, total, tmp):
    """Runs an assembler over the lines; {line: (text, bytes) or None}."""
    res = {}
    todo = dict(lines)
    for _ in range(4):  # tileasm writes no listing when any line fails: drop failing lines and rerun
        if not todo:
            break
        write_numbered(tmp, todo, total)
        out, err = run(cmd_for(tmp))
        bad = {int(m.group(1)) for m in map(ERR_RE.match, err.split("\n")) if m}
        encs = encodings(out)
        good = [i for i in sorted(todo) if i not in bad]
        if bad and not encs and good:
            for i in bad:
                res[i] = None
                todo.pop(i, None)
            continue
        for i in bad:
            res[i] = None
        if len(encs) == len(good):
            for i, e in zip(good, encs):
                res[i] = e
            return res
        # cannot map the listing to lines (a line gave no or two encodings): one line at a time
        for i in good:
            write_numbered(tmp, {1: todo[i]}, 1)
            out, err = run(cmd_for(tmp))
            e = encodings(out)
            res[i] = e[0] if len(e) == 1 and "error:" not in err else None
        return res
    for i in todo:
        res.setdefault(i, None)
    return res


def llvm_disasm(mc, cfg, lines, tmp):
    tgt, w64, _, _ = cfg
    res = {}
    nums = sorted(lines)
    with open(tmp, "w") as f:
        for i in range(1, (nums[-1] if nums else 0) + 1):
            f.write(",".join("0x%02x" % b for b in lines[i]) + "\n" if i in lines else "\n")
    out, err = run([mc, "--disassemble", "-triple=amdgcn", "-mcpu=" + tgt] + mattr(cfg), tmp)
    bad = {int(m.group(1)) for m in map(WARN_RE.match, err.split("\n")) if m}
    insns = [l.strip() for l in out.split("\n") if l.strip() and not l.strip().startswith(".")]
    good = [i for i in nums if i not in bad]
    for i in bad:
        res[i] = None
    if len(insns) == len(good):
        for i, t in zip(good, insns):
            res[i] = t
        return res
    for i in good:  # a line held more or less than one instruction: one at a time
        with open(tmp, "w") as f:
            f.write(",".join("0x%02x" % b for b in lines[i]) + "\n")
        out, err = run([mc, "--disassemble", "-triple=amdgcn", "-mcpu=" + tgt] + mattr(cfg), tmp)
        t = [l.strip() for l in out.split("\n") if l.strip() and not l.strip().startswith(".")]
        res[i] = " | ".join(t) if t and "warning" not in err else None
    return res


DIS_RE = re.compile(r"^\s*(.*?)\s*// ([0-9A-Fa-f]{12}):")


def tileasm_disasm(ta, cfg, lines, tmp):
    """{line: text or None}; lines are laid out back to back and mapped by offset."""
    tgt, w64, _, _ = cfg
    flags = ["--target=" + tgt] + (["--wave64"] if w64 and tgt == "gfx1100" else [])
    nums = sorted(lines)
    blob, start = bytearray(), {}
    for i in nums:
        start[len(blob)] = i
        blob += lines[i]
    with open(tmp, "wb") as f:
        f.write(blob)
    out, _ = run([ta, "disasm", tmp] + flags)
    res, cur = {}, None
    for l in out.split("\n"):
        m = DIS_RE.match(l)
        if not m:
            continue
        off = int(m.group(2), 16)
        if off in start:
            cur = start[off]
            res[cur] = [m.group(1)]
        elif cur is not None:
            res[cur].append(m.group(1))
    final = {}
    for i in nums:
        r = res.get(i)
        if r is None or len(r) != 1 or r[0].startswith(".long"):
            # our decoder took a different length, or gave up: this line alone
            with open(tmp, "wb") as f:
                f.write(lines[i])
            out, _ = run([ta, "disasm", tmp] + flags)
            t = [m.group(1) for m in map(DIS_RE.match, out.split("\n")) if m]
            r = t
        final[i] = None if not r or any(x.startswith(".long") for x in r) else " | ".join(r)
    return final


def mattr(cfg):
    tgt, w64, other, _ = cfg
    a = []
    if tgt == "gfx1100":
        a.append("+wavefrontsize64" if w64 else "+wavefrontsize32")
    if other:
        a += other.split(",")
    return ["-mattr=" + ",".join(a)] if a else []


def family(text):
    mn = text.split()[0] if text.split() else "?"
    for suf in ("_e64_dpp", "_dpp", "_sdwa", "_e64", "_e32"):
        if mn.endswith(suf):
            return "*" + suf
    if re.search(r"\bv\d+\.[lh]\b", text):
        return "true16 (.l/.h)"
    if "dpp8:" in text:
        return "dpp8"
    if re.search(r"row_|quad_perm|row_mask|bank_mask", text):
        return "dpp16"
    if "sdwa" in text or "dst_sel" in text or "src0_sel" in text:
        return "sdwa"
    for k in ("hwreg(", "sendmsg(", "@rel32", "@abs32", "@gotpcrel"):
        if k in text:
            return k
    m = re.match(r"([a-z]+)_", mn)
    return (m.group(1) if m else mn) + "_*"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dirs", nargs="+")
    ap.add_argument("--tileasm", default=os.path.join(os.path.dirname(__file__), "..", "build", "tools", "tileasm"))
    ap.add_argument("--llvm-mc", default="llvm-mc-19")
    ap.add_argument("--list", default=None)
    ap.add_argument("--families", action="store_true")
    a = ap.parse_args()

    files = []
    for d in a.dirs:
        for root, _, names in os.walk(d):
            files += [os.path.join(root, n) for n in sorted(names) if n.endswith((".s", ".txt"))]
    A = collections.defaultdict(collections.Counter)
    D = collections.defaultdict(collections.Counter)
    fam = collections.defaultdict(collections.Counter)
    listed = []
    tmpd = tempfile.mkdtemp(prefix="mc_corpus-")
    tmp = os.path.join(tmpd, "in")
    for path in files:
        text = open(path, errors="replace").read()
        for cfg in configs(text):
            tgt, w64, other, disasm = cfg
            row = tgt + (" w64" if tgt == "gfx1100" and w64 else "")
            is_txt = path.endswith(".txt")
            if disasm != is_txt:
                continue
            if is_txt:
                lines = hex_lines(text)
                if other:
                    D[row]["mode"] += len(lines)
                    continue
                ref = llvm_disasm(a.llvm_mc, cfg, lines, tmp)
                ours = tileasm_disasm(a.tileasm, cfg, lines, tmp + ".bin")
                for i in lines:
                    r, o = ref.get(i), ours.get(i)
                    if r is None:
                        c = "invalid-decoded" if o is not None else "both-invalid"
                    elif o is None:
                        c = "not-decoded"
                    else:
                        c = "same" if r == o else "decoded-differently"
                    D[row][c] += 1
                    if a.list == c:
                        listed.append("%s:%d [%s] llvm: %s | ours: %s" % (path, i, row, r, o))
                continue
            lines = asm_lines(text)
            if other:
                A[row]["mode"] += len(lines)
                continue
            total = max(lines) if lines else 0
            lf = mattr(cfg)
            ref = assemble_all(lambda p: [a.llvm_mc, "-triple=amdgcn", "-mcpu=" + tgt, "-show-encoding"] + lf + [p],
                               lines, total, tmp)
            flags = ["--target=" + tgt] + (["--wave64"] if w64 and tgt == "gfx1100" else [])
            ours = assemble_all(lambda p: [a.tileasm, "asm", p, "--show-encoding"] + flags, lines, total, tmp)
            for i, s in lines.items():
                r, o = ref.get(i), ours.get(i)
                if r is None:
                    c = "invalid-accepted" if o is not None else "both-rejected"
                elif o is None:
                    c = "rejected"
                    fam[row][family(s)] += 1
                elif r[1] != o[1]:
                    c = "mis-encoded"
                else:
                    c = "matched"
                    if r[0] != o[0]:
                        A[row]["printed-differently"] += 1
                        if a.list == "printed-differently":
                            listed.append("%s:%d [%s] %s | llvm: %s | ours: %s" % (path, i, row, s, r[0], o[0]))
                A[row][c] += 1
                if a.list == c:
                    listed.append("%s:%d [%s] %s | llvm: %s | ours: %s" % (path, i, row, s, r, o))
    os.path.exists(tmp) and os.unlink(tmp)
    os.path.exists(tmp + ".bin") and os.unlink(tmp + ".bin")
    os.rmdir(tmpd)

    print("assembler (llvm-mc-19 -show-encoding vs tileasm asm --show-encoding), %d files" % len(files))
    print("| target | matched / valid | mis-encoded | rejected | invalid accepted | printed differently | mode |")
    print("|---|---|---|---|---|---|---|")
    bad = 0
    for row in sorted(A):
        c = A[row]
        valid = c["matched"] + c["mis-encoded"] + c["rejected"]
        pct = 100.0 * c["matched"] / valid if valid else 0.0
        print("| %s | %d / %d (%.1f%%) | %d | %d | %d | %d | %d |" % (
            row, c["matched"], valid, pct, c["mis-encoded"], c["rejected"], c["invalid-accepted"],
            c["printed-differently"], c["mode"]))
        bad += c["mis-encoded"] + c["invalid-accepted"]
    print()
    print("disassembler (llvm-mc-19 --disassemble vs tileasm disasm)")
    print("| target | same / valid | not decoded | decoded differently | invalid decoded | mode |")
    print("|---|---|---|---|---|---|")
    for row in sorted(D):
        c = D[row]
        valid = c["same"] + c["not-decoded"] + c["decoded-differently"]
        pct = 100.0 * c["same"] / valid if valid else 0.0
        print("| %s | %d / %d (%.1f%%) | %d | %d | %d | %d |" % (
            row, c["same"], valid, pct, c["not-decoded"], c["decoded-differently"], c["invalid-decoded"], c["mode"]))
        bad += c["decoded-differently"] + c["invalid-decoded"]
    if a.families:
        for row in sorted(fam):
            print("\nrejected by family, %s:" % row)
            for k, v in fam[row].most_common(25):
                print("  %6d  %s" % (v, k))
    for l in listed:
        print(l)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
