#!/usr/bin/python3
"""Runs the examples of numpipe's documentation (ctest label docs).

    examples.py --doc FILE.md      every ```sh and ```python block of a Markdown document, in order
    examples.py --man PAGE.1       every command of a man page's EXAMPLES section, in order, and
                                   checks that the tool's --help examples are among them
    examples.py --tools            every program in BIN has a man page with an EXAMPLES section

The convention (docs/DEVELOPING.md, "Examples in the documentation are tested"):
examples run with the tools on PATH, in a scratch folder where `share`, `man` and `bench`
link to the repository's; the examples of one document run in order in one
folder, so that a walkthrough builds on its earlier steps. A shell example runs
as in a user's terminal (through `script`): stdout and stderr are a terminal, so
a stream written there is refused, and stdin is at its end. An example that is too
heavy for a 2-core machine, or needs a GPU, declares on the line just before it
how the test shrinks it:

    <!-- docs-test: s/--n 4096/--n 64/ s/--backend cuda/--backend cpu/ -->
    .\\" docs-test: s/--n 4096/--n 64/

Each s/OLD/NEW/ replaces every occurrence of the literal text OLD (any delimiter
character may stand for /); a substitution that matches nothing is an error, so
that annotations cannot go stale. `expect/TEXT/` requires TEXT in the example's
output (stdout and stderr), to hold an example to what the text around it says.
`skip: REASON` is for a command that cannot run on one machine (a Slurm line);
the reasons are printed.

Environment: BIN (the tools), SRC (the repository), WORK (a scratch folder), PY
(python3 with NumPy, may be empty). Exit 0: all ran; 1: an example failed or a
rule was broken; 77: nothing to run in this build (its tools are not built).
"""

import argparse
import os
import re
import shlex
import shutil
import subprocess
import sys
import time

ANNOTATION_MD = re.compile(r"^ {0,3}<!--\s*docs-test:(.*?)-->\s*$")
ANNOTATION_MAN = re.compile(r'^\.\\"\s*docs-test:(.*)$')
FENCE = re.compile(r"^(\s*)(```+|~~~+)\s*([^`\s]*)(.*)$")
RUN_LANGUAGES = {"sh": "sh", "bash": "sh", "shell": "sh", "python": "python", "py": "python"}
# Example commands may run for a while on a slow machine, but not forever.
TIMEOUT = int(os.environ.get("NUMPIPE_DOCS_TIMEOUT", "600"))


class Failure(Exception):
    pass


# User-facing text speaks of the user's problem, not of how the project was run.
INTERNALS = re.compile(r"\bseed 0\d\d\b|\bseed's\b|\bthe seed\b|\bissues?\b|\bsessions?\b|\blent\b", re.I)


def internals(text, label, first_line=1):
    """Lines of user-facing text that name the project's internals."""
    out = []
    for k, line in enumerate(text.split("\n")):
        m = INTERNALS.search(line)
        if m:
            out.append("%s:%d: user-facing text speaks of the project's internals ('%s'): %s"
                       % (label, first_line + k, m.group(0), line.strip()[:100]))
    return out


class Annotation:
    """The parsed text after `docs-test:`."""

    def __init__(self, text, where):
        self.where = where
        self.subs = []
        self.expect = []
        self.skip = None
        text = text.strip()
        if text.startswith("skip:"):
            self.skip = text[len("skip:"):].strip()
            if not self.skip:
                raise Failure("%s: docs-test: skip needs a reason" % where)
            return
        i = 0
        while i < len(text):
            if text[i].isspace():
                i += 1
                continue
            if text.startswith("expect", i) and i + 6 < len(text) and not text[i + 6].isalnum():
                d = text[i + 6]
                end = text.find(d, i + 7)
                if end < 0:
                    raise Failure("%s: docs-test: unterminated expect%s...%s" % (where, d, d))
                self.expect.append(text[i + 7:end])
                i = end + 1
                continue
            if text[i] == "s" and i + 1 < len(text) and not text[i + 1].isalnum() and not text[i + 1].isspace():
                d = text[i + 1]
                mid = text.find(d, i + 2)
                end = text.find(d, mid + 1) if mid >= 0 else -1
                if mid < 0 or end < 0:
                    raise Failure("%s: docs-test: unterminated substitution starting at '%s'" % (where, text[i:]))
                old, new = text[i + 2:mid], text[mid + 1:end]
                if not old:
                    raise Failure("%s: docs-test: empty pattern in substitution" % where)
                self.subs.append((old, new))
                i = end + 1
                continue
            raise Failure("%s: docs-test: cannot read '%s' (expected s/OLD/NEW/, expect/TEXT/ or skip: REASON)"
                          % (where, text[i:]))

    def apply(self, code):
        for old, new in self.subs:
            if old not in code:
                raise Failure("%s: docs-test: s/%s/%s/ matches nothing in the example (stale annotation?)"
                              % (self.where, old, new))
            code = code.replace(old, new)
        return code

    def describe(self):
        return " ".join("s/%s/%s/" % s for s in self.subs)


class Example:
    def __init__(self, source, line, language, code, annotation=None):
        self.source, self.line, self.language, self.code = source, line, language, code
        self.annotation = annotation

    @property
    def where(self):
        return "%s:%d" % (self.source, self.line)


# ---------------------------------------------------------------------------------
# Markdown

def markdown_examples(path, label, tool_names):
    """The runnable examples of a Markdown file, and the rule violations found on the way."""
    lines = open(path, encoding="utf-8").read().split("\n")
    examples, problems = [], []
    pending = None  # (annotation, line number)
    i = 0
    prev_blank = True
    in_list_or_para = False
    while i < len(lines):
        line = lines[i]
        m = ANNOTATION_MD.match(line)
        if m:
            if pending:
                problems.append("%s:%d: docs-test annotation not followed by a code block" % (label, pending[1]))
            pending = (Annotation(m.group(1), "%s:%d" % (label, i + 1)), i + 1)
            i += 1
            continue
        f = FENCE.match(line)
        if f:
            indent, fence, lang = f.group(1), f.group(2), f.group(3).lower()
            start = i + 1
            body = []
            i += 1
            while i < len(lines) and not (lines[i].strip().startswith(fence[0] * len(fence))
                                          and lines[i].strip().strip(fence[0]) == ""):
                body.append(lines[i][len(indent):] if lines[i].startswith(indent) else lines[i])
                i += 1
            i += 1  # the closing fence
            annotation = pending[0] if pending and pending[1] == start - 1 else None
            if pending and annotation is None:
                problems.append("%s:%d: docs-test annotation must be on the line just before the block"
                                % (label, pending[1]))
            pending = None
            kind = RUN_LANGUAGES.get(lang)
            if kind:
                examples.append(Example(label, start, kind, "\n".join(body) + "\n", annotation))
            elif annotation is not None:
                problems.append("%s:%d: docs-test annotation on a ```%s block, which is not run"
                                % (label, start, lang or ""))
            elif lang in ("", "console"):
                problems.extend(untested_commands(body, label, start + 1, tool_names, "a ``` block without a language"))
            prev_blank = False
            continue
        if pending and line.strip():
            problems.append("%s:%d: docs-test annotation not followed by a code block" % (label, pending[1]))
            pending = None
        # An indented code block: four spaces after a blank line, outside a list item.
        if line.startswith("    ") and prev_blank and not in_list_or_para:
            start = i + 1
            body = []
            while i < len(lines) and (lines[i].startswith("    ") or not lines[i].strip()):
                body.append(lines[i][4:])
                i += 1
            problems.extend(untested_commands(body, label, start, tool_names, "an indented block"))
            prev_blank = True
            continue
        stripped = line.strip()
        if not stripped:
            prev_blank, in_list_or_para = True, False
        else:
            prev_blank = False
            in_list_or_para = True
        i += 1
    if pending:
        problems.append("%s:%d: docs-test annotation not followed by a code block" % (label, pending[1]))
    return examples, problems


def untested_commands(body, label, first_line, tool_names, what):
    """Lines of a block that is not run which look like numpipe commands."""
    out = []
    for k, text in enumerate(body):
        words = text.strip().split()
        if words and (words[0] in tool_names or (words[0] in ("mpirun", "srun") and
                                                    any(w in tool_names for w in words))):
            out.append("%s:%d: a command in %s, which the docs test cannot run: put it in a ```sh block "
                       "(or a ```text block if it is not meant to be run as written)" % (label, first_line + k, what))
            break
    return out


def dangling_references(text, label, folder, src):
    """Links to files that do not exist, and paths a user of a clone does not have."""
    out = []
    for k, line in enumerate(text.split("\n"), 1):
        if "../shared" in line:
            out.append("%s:%d: '../shared' is not part of numpipe: %s" % (label, k, line.strip()[:100]))
        if re.search(r"\bDESIGN\.md\b", line):
            out.append("%s:%d: there is no DESIGN.md in numpipe: %s" % (label, k, line.strip()[:100]))
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", line):
            if re.match(r"^[a-z]+:", target):
                continue  # a URL
            if not os.path.exists(os.path.join(folder, target)):
                out.append("%s:%d: the link target %s does not exist" % (label, k, target))
    return out


# ---------------------------------------------------------------------------------
# man pages

ROFF_ESCAPES = [("\\(aq", "'"), ("\\(dq", '"'), ("\\(ti", "~"), ("\\(ha", "^"), ("\\(ga", "`"),
                ("\\(rs", "\\"), ("\\&", ""), ("\\-", "-"), ("\\ ", " "), ("\\~", " "),
                ("\\fB", ""), ("\\fI", ""), ("\\fR", ""), ("\\fP", ""), ("\\fC", ""), ("\\f(CW", ""),
                ("\\e", "\\")]


def unroff(text):
    out = []
    i = 0
    while i < len(text):
        if text[i] == "\\":
            if text.startswith("\\\\", i):
                out.append("\\")
                i += 2
                continue
            for esc, rep in ROFF_ESCAPES:
                if text.startswith(esc, i):
                    out.append(rep)
                    i += len(esc)
                    break
            else:
                out.append(text[i])
                i += 1
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def join_commands(lines):
    """Groups lines into commands: a line ending in \\ or | continues; so does a next line
    starting with | or &&. Returns [(first index, text)]."""
    commands = []
    current, first = [], None
    for k, text in lines:
        if not text.strip():
            if current:
                commands.append((first, "\n".join(current)))
                current, first = [], None
            continue
        if current and not (current[-1].rstrip().endswith(("\\", "|", "&&")) or
                            text.lstrip().startswith(("|", "&&"))):
            commands.append((first, "\n".join(current)))
            current, first = [], None
        if first is None:
            first = k
        current.append(text)
    if current:
        commands.append((first, "\n".join(current)))
    return commands


def man_examples(path, label):
    lines = open(path, encoding="utf-8").read().split("\n")
    examples, problems = [], []
    in_section = False
    in_code = False
    code_lines = []          # (line number, text, annotation or None)
    pending = None
    found_section = False
    for k, raw in enumerate(lines, 1):
        if raw.startswith(".SH"):
            in_section = re.match(r"^\.SH\s+\"?EXAMPLES?\"?\s*$", raw) is not None
            found_section = found_section or in_section
            in_code = False
            continue
        if not in_section:
            continue
        m = ANNOTATION_MAN.match(raw)
        if m:
            if pending:
                problems.append("%s:%d: docs-test annotation not followed by a command" % (label, pending[1]))
            pending = (Annotation(m.group(1), "%s:%d" % (label, k)), k)
            continue
        if raw.startswith((".nf", ".EX")):
            in_code = True
            continue
        if raw.startswith((".fi", ".EE")):
            in_code = False
            code_lines.append((k, "", None))
            continue
        if raw.startswith(".") or raw.startswith("'"):
            continue
        if not in_code:
            continue
        text = unroff(raw)
        ann = None
        if pending and text.strip():
            ann = pending[0]
            pending = None
        code_lines.append((k, text, ann))
    if pending:
        problems.append("%s:%d: docs-test annotation not followed by a command" % (label, pending[1]))
    if not found_section:
        problems.append("%s: no EXAMPLES section" % label)
    annotations = {k: a for k, _t, a in code_lines if a is not None}
    for first, text in join_commands([(k, t) for k, t, _a in code_lines]):
        ann = annotations.get(first)
        examples.append(Example(label, first, "sh", text + "\n", ann))
    # An annotation must sit before the first line of a command, not inside one.
    firsts = {first for first, _t in join_commands([(k, t) for k, t, _a in code_lines])}
    for k in annotations:
        if k not in firsts:
            problems.append("%s:%d: docs-test annotation inside a command (put it before its first line)"
                            % (label, k))
    return examples, problems


def help_examples(exe, args):
    """The commands of `exe args --help`'s Example block."""
    out = subprocess.run([exe] + args + ["--help"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         universal_newlines=True, timeout=60)
    if out.returncode != 0:
        raise Failure("%s --help exits %d: %s" % (" ".join([os.path.basename(exe)] + args), out.returncode,
                                                   out.stderr.strip()))
    lines = out.stdout.split("\n")
    block = []
    inside = False
    for line in lines:
        if re.match(r"^Examples?:\s*$", line):
            inside = True
            continue
        if inside:
            if not line.strip():
                if block:
                    break
                continue
            block.append(line)
    return [text for _k, text in join_commands(list(enumerate(block)))], out.stdout


def normalise(command):
    return " ".join(command.replace("\\\n", " ").split())


# ---------------------------------------------------------------------------------
# running

def prepare_folder(work, src):
    if os.path.isdir(work):
        shutil.rmtree(work)
    os.makedirs(work)
    for name in ("share", "man", "bench"):
        os.symlink(os.path.join(src, name), os.path.join(work, name))


def command_tools(code, tool_names):
    """The numpipe tools an example calls (first words of its simple commands)."""
    used = set()
    for word in re.split(r"[\s|;&()`$]+", code):
        if word in tool_names:
            used.add(word)
    return used


def run_example(ex, work, env, bin_tools, all_tools, py, log):
    if ex.annotation is not None and ex.annotation.skip:
        log.append("SKIP %s: %s" % (ex.where, ex.annotation.skip))
        print("skip  %s: %s" % (ex.where, ex.annotation.skip), flush=True)
        return "skip"
    code = ex.annotation.apply(ex.code) if ex.annotation is not None else ex.code
    missing = sorted(command_tools(code, all_tools) - bin_tools)
    if re.search(r"(^|[|;&]\s*)mpirun\b", code, re.M) and not shutil.which("mpirun"):
        missing.append("mpirun")
    if missing:
        print("skip  %s: not built here: %s" % (ex.where, ", ".join(missing)), flush=True)
        return "unbuilt"
    if ex.language == "python":
        if not py:
            print("skip  %s: no python3 with NumPy" % ex.where, flush=True)
            return "unbuilt"
        # Optional modules an example needs (Debian: python3-xarray, python3-netcdf4).
        for module, marks in (("xarray", ("to_xarray", "import xarray")), ("netCDF4", ("to_netcdf",))):
            if any(m in code for m in marks) and subprocess.run([py, "-c", "import " + module],
                                                                 stderr=subprocess.DEVNULL).returncode != 0:
                print("skip  %s: needs the Python module %s" % (ex.where, module), flush=True)
                return "unbuilt"
        script = os.path.join(work, ".example.py")
        with open(script, "w") as f:
            f.write(code)
        argv = [py, script]
    else:
        if re.search(r"^\s*\$ ", code, re.M):
            raise Failure("%s: a shell prompt ('$ ') in a ```sh block: write the command alone" % ex.where)
        script = os.path.join(work, ".example.sh")
        with open(script, "w") as f:
            f.write("set -eo pipefail\n" + code)
        argv = ["bash", script]
        # As in a user's terminal: stdout and stderr are a terminal (a tool that would
        # write binary there refuses, so an example must say where its stream goes),
        # stdin is at its end (an example that would wait for typed input fails).
        if shutil.which("script"):
            argv = ["script", "-qec", "bash " + shlex.quote(script), "/dev/null"]
    shrunk = ex.annotation.describe() if ex.annotation is not None else ""
    print("run   %s%s" % (ex.where, "  [" + shrunk + "]" if shrunk else ""), flush=True)
    t0 = time.time()
    try:
        p = subprocess.run(argv, cwd=work, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        raise Failure("%s: still running after %d s:\n%s" % (ex.where, TIMEOUT, indent(code)))
    output = p.stdout.decode("utf-8", "replace").replace("\r\n", "\n")
    if p.returncode != 0:
        raise Failure("%s: exit %d%s\n--- example%s:\n%s--- output (last 40 lines):\n%s"
                      % (ex.where, p.returncode, "", " (as run)" if shrunk else "", indent(code),
                         indent("\n".join(output.rstrip("\n").split("\n")[-40:]))))
    for text in (ex.annotation.expect if ex.annotation is not None else []):
        if text not in output:
            raise Failure("%s: the output lacks '%s', which the text around the example promises\n"
                          "--- output (last 40 lines):\n%s" % (ex.where, text,
                                                              indent("\n".join(output.split("\n")[-40:]))))
    print("      ok (%.1f s)" % (time.time() - t0), flush=True)
    return "ok"


def indent(text):
    return "".join("    " + line + "\n" for line in text.rstrip("\n").split("\n"))


def tool_names(src, bin_dir):
    names = {os.path.basename(p)[:-2] for p in os.listdir(os.path.join(src, "man", "man1")) if p.endswith(".1")}
    return names | bin_programs(bin_dir)


def bin_programs(bin_dir):
    return {p for p in os.listdir(bin_dir)
            if os.path.isfile(os.path.join(bin_dir, p)) and os.access(os.path.join(bin_dir, p), os.X_OK)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--doc")
    g.add_argument("--man")
    g.add_argument("--tools", action="store_true")
    ap.add_argument("--list", action="store_true", help="print the examples as they would run, run nothing")
    a = ap.parse_args()
    src = os.environ["SRC"]
    bin_dir = os.environ["BIN"]
    work = os.environ.get("WORK", "")
    py = os.environ.get("PY", "")
    if py and subprocess.run([py, "-c", "import numpy"], stderr=subprocess.DEVNULL).returncode != 0:
        py = ""
    bin_tools = bin_programs(bin_dir)
    all_tools = tool_names(src, bin_dir)

    problems = []
    if a.tools:
        for tool in sorted(bin_tools):
            page = os.path.join(src, "man", "man1", tool + ".1")
            if not os.path.isfile(page):
                problems.append("%s is built but has no man page man/man1/%s.1 (where its examples are run)"
                                % (tool, tool))
        for p in problems:
            print("FAIL: " + p)
        if problems:
            return 1
        print("PASS: %d programs, each with a man page whose examples ctest -L docs runs" % len(bin_tools))
        return 0

    if a.doc:
        path = os.path.join(src, a.doc)
        examples, problems = markdown_examples(path, a.doc, all_tools)
        text = open(path, encoding="utf-8").read()
        if os.path.basename(a.doc) != "DEVELOPING.md":  # the contributors' page may speak of the project
            problems += internals(text, a.doc)
        problems += dangling_references(text, a.doc, os.path.dirname(path), src)
    else:
        path = os.path.join(src, a.man)
        tool = os.path.basename(a.man)[:-2]
        examples, problems = man_examples(path, a.man)
        problems += internals(open(path, encoding="utf-8").read(), a.man)
        if tool not in bin_tools:
            print("SKIP: %s is not built here" % tool)
            return 77
        # Every --help example is also in the man page, where it runs with the page's substitutions.
        in_page = {normalise(ex.code) for ex in examples}
        helps = [[]]
        if tool == "gen-input":
            listing = subprocess.run([os.path.join(bin_dir, tool), "list"], stdout=subprocess.PIPE,
                                     universal_newlines=True).stdout
            helps += [[line.split()[0]] for line in listing.split("\n") if line.strip()]
        for args in helps:
            commands, text = help_examples(os.path.join(bin_dir, tool), args)
            name = " ".join([tool] + args)
            if not commands:
                problems.append("%s --help has no Example block" % name)
            for c in commands:
                if normalise(c) not in in_page:
                    problems.append("%s --help's example is not in %s's EXAMPLES, where it would be run:\n%s"
                                    % (name, a.man, indent(c)))
            problems += internals(text, name + " --help")

    if a.list:
        for ex in examples:
            code = ex.annotation.apply(ex.code) if ex.annotation and not ex.annotation.skip else ex.code
            print("--- %s (%s)%s\n%s" % (ex.where, ex.language,
                                        " skip: " + ex.annotation.skip if ex.annotation and ex.annotation.skip else "",
                                        code))
        for p in problems:
            print("PROBLEM: " + p)
        return 0

    for p in problems:
        print("FAIL: " + p, flush=True)
    if problems:
        return 1

    env = dict(os.environ)
    env["PATH"] = bin_dir + os.pathsep + env.get("PATH", "")
    env["PYTHONPATH"] = os.path.join(src, "share", "python") + (
        os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.setdefault("OMP_WAIT_POLICY", "passive")
    # profile-report --calibrate writes here, not into the user's ~/.cache.
    env["NUMPIPE_CALIBRATION"] = os.path.join(work, ".calibration.json")
    # mpirun examples: two ranks on a small machine, as root in containers.
    env.update({"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
                "OMPI_MCA_rmaps_base_oversubscribe": "1"})
    prepare_folder(work, src)
    counts = {"ok": 0, "skip": 0, "unbuilt": 0}
    skips = []
    try:
        for ex in examples:
            counts[run_example(ex, work, env, bin_tools, all_tools, py, skips)] += 1
    except Failure as e:
        print("FAIL: %s" % e, flush=True)
        return 1
    print("PASS: %s: %d examples ran, %d skipped by annotation, %d need tools not built here"
          % (a.doc or a.man, counts["ok"], counts["skip"], counts["unbuilt"]))
    for s in skips:
        print("  " + s)
    if counts["ok"] == 0 and counts["unbuilt"] > 0:
        return 77
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Failure as e:
        print("FAIL: %s" % e)
        sys.exit(1)
