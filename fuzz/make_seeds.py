#!/usr/bin/env python3
"""Builds the committed fuzz inputs from conformance/ (run from the repository root):

- fuzz/templates.json: a few instructions per opcode form, memrefs blanked, which the
  `run_program` target's structured builder fills in with its own locations and shapes;
- fuzz/corpus/<target>/: seed inputs (minified conformance programs for the JSON targets).

Deterministic: files are visited in sorted order, so reruns give the same bytes.
"""
import glob, hashlib, json, os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
progs = sorted(glob.glob(os.path.join(ROOT, "conformance/**/*.json"), recursive=True))

def walk(nodes, out):
    """Every instruction under a list of nodes: instructions, blocks (`instructions`) and loop
    nodes (Loop, DoWhile, DynamicForLoop: `blocks`), which may also stand directly in a
    function's block list."""
    for i in nodes:
        if i.get("opcode") in ("Loop", "DoWhile", "DynamicForLoop"):
            walk(i.get("blocks", []), out)
        elif "opcode" not in i:
            walk(i.get("instructions", []), out)
        else:
            out.append(i)

def scalars(i):
    return tuple(sorted((k, json.dumps(v)) for k, v in i.items()
                        if k not in ("name", "ins", "outs", "engine") and not isinstance(v, (list, dict))))

templates, seen, per_op = [], set(), {}
insts = []
for f in progs:
    if "/programs/" not in f:
        continue
    p = json.load(open(f))
    for fn in p.get("functions", []):
        walk(fn.get("blocks", []), insts)


def modes(i):
    """The instruction's string and boolean fields (modes and flags: perf_mode, is_transpose, ...)."""
    return tuple((k, v) for k, v in scalars(i) if not v.lstrip("-").replace(".", "").isdigit())


def take(i, key):
    seen.add(key)
    per_op[i.get("opcode")] = per_op.get(i.get("opcode"), 0) + 1
    t = json.loads(json.dumps(i))
    for op in t.get("ins", []) + t.get("outs", []):
        if isinstance(op, dict):
            op.pop("memsetref", None)
            if "memref" in op:
                op["memref"] = ""
    templates.append(t)


# First one template per distinct mode of each opcode (so a mode the corpus has few cases of,
# e.g. Matmult's DoubleRow, is not crowded out; up to 10), then more forms, up to 6 per opcode.
for first_pass in (True, False):
    for i in insts:
        # A DMABlock's descriptor opcodes count as its form, so each descriptor kind gets one.
        descs = tuple(sorted({d.get("opcode", "") for d in i.get("descriptors", [])}))
        key = (i.get("opcode"), tuple(sorted(i.keys())), scalars(i), len(i.get("ins", [])), len(i.get("outs", [])), descs)
        mode_key = ("modes", i.get("opcode"), modes(i), descs)
        if key in seen or per_op.get(i.get("opcode"), 0) >= (10 if first_pass else 6):
            continue
        if first_pass:
            if mode_key in seen:
                continue
            seen.add(mode_key)
        take(i, key)
with open(os.path.join(ROOT, "fuzz/templates.json"), "w") as w:
    json.dump(templates, w, separators=(",", ":"))
    w.write("\n")

def put(target, data):
    d = os.path.join(ROOT, "fuzz/corpus", target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, hashlib.sha1(data).hexdigest()), "wb") as w:
        w.write(data)

# JSON seeds: every small conformance program (valid and malformed), minified; at most 250.
small = [f for f in progs if os.path.getsize(f) < 16384]
step = max(1, len(small) // 250)
for f in small[::step][:250]:
    raw = open(f, "rb").read()
    try:
        data = json.dumps(json.loads(raw), separators=(",", ":")).encode()
    except ValueError:
        data = raw  # a malformed case stays as it is
    put("json_validate", data)
    if "/programs/" in f:
        put("run_program", data)
print(len(templates), "templates;", sum(per_op.values()), "instructions")
