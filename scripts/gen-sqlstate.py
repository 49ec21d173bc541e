#!/usr/bin/env python3
"""Regenerates the SQLSTATE table of crates/pgpipe/src/error/sqlstate.rs
from PostgreSQL's src/backend/utils/errcodes.txt (installed as
share/postgresql/errcodes.txt, e.g. /usr/share/postgresql/15/errcodes.txt).

  scripts/gen-sqlstate.py ERRCODES_TXT VERSION          rewrite the file
  scripts/gen-sqlstate.py ERRCODES_TXT VERSION --check  exit 1 if it differs

Only the generated part changes: from the first `impl SqlState {` that holds
the constants to the end of `fn lookup`, plus the version named in the
header. The rest of the file (the type, its impls, the tests) is written by
hand. The output is formatted with rustfmt, as the file is.
"""
import re
import subprocess
import sys
from pathlib import Path

RS = Path(__file__).resolve().parent.parent / "crates/pgpipe/src/error/sqlstate.rs"
START = "impl SqlState {\n    // Class 00"
END_MARK = "    Some(index)\n}\n"


def parse(errcodes):
    """(class heading or None, code, macro, name or None) per line, in order."""
    rows = []
    section = None
    for line in errcodes.splitlines():
        if not line or line.startswith("#"):
            continue
        if line.startswith("Section:"):
            section = line[len("Section:"):].strip()
            continue
        parts = line.split()
        if len(parts) < 3 or not parts[2].startswith("ERRCODE_"):
            continue
        code, macro = parts[0], parts[2][len("ERRCODE_"):]
        name = parts[3] if len(parts) > 3 else None
        rows.append((section, code, macro, name))
        section = None
    return rows


def generate(rows):
    names = {}
    first_const = {}
    order = []
    for _, code, macro, name in rows:
        if name and code not in names:
            names[code] = name
        if code not in first_const:
            first_const[code] = macro
            order.append(code)
    index = {code: i for i, code in enumerate(order)}
    out = ["impl SqlState {"]
    for i, (section, code, macro, _) in enumerate(rows):
        if section:
            if i:
                out.append("")
            out.append(f"    // {section}")
        doc = f"    /// `{code}` `{names.get(code, '')}`"
        if first_const[code] != macro:
            doc += f" (same code as [`SqlState::{first_const[code]}`])"
        out.append(doc + ".")
        out.append(f"    pub const {macro}: SqlState = SqlState::known(idx::E{code});")
    out.append("}")
    out.append("")
    out.append("/// Indices into `TABLE`, one per distinct code.")
    out.append("mod idx {")
    for code in order:
        out.append(f"    pub(super) const E{code}: u16 = {index[code]};")
    out.append("}")
    out.append("")
    out.append("/// Code and condition name of every known code, indexed by `idx`.")
    out.append(f"static TABLE: [(&str, &str); {len(order)}] = [")
    for code in order:
        out.append(f'    ("{code}", "{names.get(code, "")}"),')
    out.append("];")
    out.append("")
    out.append("/// Finds a code in `TABLE`. The byte-string patterns compile to a decision")
    out.append("/// tree over the five bytes.")
    out.append("fn lookup(code: &[u8; 5]) -> Option<u16> {")
    out.append("    let index = match code {")
    for code in order:
        out.append(f'        b"{code}" => idx::E{code},')
    out.append("        _ => return None,")
    out.append("    };")
    out.append("    Some(index)")
    out.append("}")
    return "\n".join(out) + "\n"


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    errcodes, version = Path(sys.argv[1]).read_text(), sys.argv[2]
    check = "--check" in sys.argv[3:]
    current = RS.read_text()
    start = current.index(START)
    end = current.index(END_MARK, start) + len(END_MARK)
    new = current[:start] + generate(parse(errcodes)) + current[end:]
    new = re.sub(r"of PostgreSQL \d+\b", f"of PostgreSQL {version}", new)
    new = re.sub(r"PostgreSQL \d+'s `errcodes.txt`", f"PostgreSQL {version}'s `errcodes.txt`", new)
    new = subprocess.run(
        ["rustfmt", "--edition", "2021", "--emit", "stdout"],
        input=new, capture_output=True, text=True, check=True,
    ).stdout
    if check:
        if new != current:
            sys.exit(f"{RS} does not match {sys.argv[1]}: run scripts/gen-sqlstate.py without --check")
        return
    RS.write_text(new)


if __name__ == "__main__":
    main()
