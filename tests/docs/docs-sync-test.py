#!/usr/bin/env python3
"""The documentation kept in step with what it documents.

  docs-sync-test.py options CONFINECTL MANPAGE COMPLETION
      Every option of every confinectl command's --help (the built binary's own) has an
      entry in confinectl(1)'s OPTIONS and is in the bash completion: offered for its command, and, where it
      takes a value, with that value skipped (the word after it is not the command).
  docs-sync-test.py keys CONFINECTL SOURCE_DIR MANPAGE
      Every key the configuration parser accepts is in confine.toml(5)'s KEYS: the known
      lists the parser itself names when it refuses a key (confinectl check-config on a
      file with an unknown key in each table), the top-level keys it compares in
      core/src/policy/config.cpp, and each built-in runner's settings (its reject_unknown list).
      Each is in config/confine.example.toml too, set or commented out beneath its table;
      and the example, copied as a user's configuration, loads without a warning
      (check-config and a run of `true`).
  docs-sync-test.py links SOURCE_DIR
      Every link from the project's Markdown documents to a local file leads to one that
      exists, and a link to a section of a Markdown file to a heading it has.
  docs-sync-test.py quickstart SOURCE_DIR
      The README's quick start is two commands, each a script of the tree: the first runs
      the main job (confinectl probe and a confined run), the second the tests, and CI
      (.ci/run) runs that second one.
"""
import os
import re
import subprocess
import sys
import tempfile

failures = []


def fail(message):
    failures.append(message)


def man_text(path):
    """A manual page's source as its words read: escapes and fonts undone."""
    text = open(path, encoding="utf-8").read()
    text = text.replace("\\-", "-").replace("\\&", "").replace("\\e", "\\")
    text = re.sub(r"\\f[BIRP]", "", text)
    text = re.sub(r"\\\((em|lq|rq|dq|bu)", " ", text)
    return text


def man_section(man, manpage, name):
    """The text of section `name` (.SH NAME) of `man`, manual page `manpage` as man_text
    reads it; None, after saying so, when the page has no such section."""
    m = re.search(r"^\.SH " + re.escape(name) + r"\n(.*?)^\.SH ", man, re.S | re.M)
    if not m:
        fail(f"{manpage} has no {name} section")
        return None
    return m.group(1)


def has_word(text, word):
    return re.search(r"(?<![A-Za-z0-9_-])" + re.escape(word) + r"(?![A-Za-z0-9_-])", text) is not None


# --- options ------------------------------------------------------------------------


def help_of(confinectl, *args):
    run = subprocess.run([confinectl, *args, "--help"], capture_output=True, text=True)
    if run.returncode != 0:
        fail(f"confinectl {' '.join(args)} --help exited {run.returncode}: {run.stderr.strip()}")
    return run.stdout


def section_lines(help_text, title):
    lines, inside = [], False
    for line in help_text.splitlines():
        if re.match(r"^[A-Z][A-Za-z ]*:$", line):
            inside = line == title + ":"
            continue
        if inside and line.strip():
            lines.append(line)
    return lines


def options_of(help_text):
    """[(option, takes_value)] from the Options: section, long and short spellings."""
    options = []
    for line in section_lines(help_text, "Options"):
        m = re.match(r"^\s+((?:-{1,2}[A-Za-z][A-Za-z0-9-]*)(?:,\s*-{1,2}[A-Za-z][A-Za-z0-9-]*)*)(\s+[A-Z][A-Z0-9_\[\]=.]*)?(\s{2,}|$)", line)
        if not m:
            fail(f"cannot read the help line {line.strip()!r}")
            continue
        takes_value = m.group(2) is not None
        for spelling in re.split(r",\s*", m.group(1)):
            options.append((spelling, takes_value))
    return options


def commands_of(help_text):
    commands = []
    for line in section_lines(help_text, "Commands"):
        m = re.match(r"^\s+([a-z][a-z-]*)\s", line)
        if m:
            commands.append(m.group(1))
    return commands


def completions(completion_file, words):
    """What the completion offers for the last of `words` (bash-completion absent)."""
    script = r'''
source "$1"; shift
COMP_WORDS=("$@")
COMP_CWORD=$(($# - 1))
COMPREPLY=()
_confinectl
printf '%s\n' "${COMPREPLY[@]}"
'''
    run = subprocess.run(["bash", "-c", script, "complete", completion_file, *words],
                         capture_output=True, text=True)
    if run.returncode != 0:
        fail(f"the completion failed on {' '.join(words)!r}: {run.stderr.strip()}")
    return set(line for line in run.stdout.splitlines() if line)


def check_options(confinectl, manpage, completion_file):
    man = man_text(manpage)
    options_section = man_section(man, manpage, "OPTIONS")
    if options_section is None:
        return
    # Each option has an entry of its own: the tag line of a .TP in OPTIONS.
    entries = re.findall(r"^\.TP\n(.*)$", options_section, re.M)
    top = help_of(confinectl)
    commands = commands_of(top)
    if not commands:
        fail("confinectl --help lists no command")
    per_command = {"": options_of(top)}
    for command in commands:
        per_command[command] = options_of(help_of(confinectl, command))
    checked = 0
    for command, options in per_command.items():
        where = f"confinectl {command}".strip()
        if command and not has_word(man, command):
            fail(f"the command {command} is not in {manpage}")
        if command and command not in completions(completion_file, ["confinectl", command[:2]]):
            fail(f"the completion does not offer the command {command}")
        offered = completions(completion_file, ["confinectl", *([command] if command else []), "-"])
        if command:
            # Nor does it offer an option the command does not take (wrap --allow-host).
            taken = {option for option, _ in options} | {"--", "-v", "--verbose", "-h", "--help"}
            for extra in sorted(o for o in offered - taken if o.startswith("-")):
                fail(f"{where}: the completion offers {extra}, which {where} --help does not list")
        for option, takes_value in options:
            checked += 1
            if not any(has_word(entry, option) for entry in entries):
                fail(f"{where}: {option} has no entry in {manpage}'s OPTIONS")
            if option not in offered:
                fail(f"{where}: the completion does not offer {option}")
            if takes_value and command in ("run", "wrap"):
                # The word after it is its value: the options go on after it.
                after = completions(completion_file, ["confinectl", command, option, "x", "-"])
                if not after or not after <= offered or "--help" not in after:
                    fail(f"{where}: after '{option} x' the completion offers {sorted(after)}, "
                         f"not {command}'s options: it takes x for the command")
    if checked == 0:
        fail("no option read from confinectl's --help")
    print(f"docs-sync-test: {checked} options of {len(per_command)} helps checked")


# --- keys ---------------------------------------------------------------------------


def known_lists(confinectl):
    """{table: [key]} as the parser names them when it refuses an unknown key."""
    probes = {
        "[policy]": "[policy]\nconfine_docs_unknown = 1\n",
        "[policy.env]": "[policy.env]\nconfine_docs_unknown = 1\n",
        "[policy.enforcement]": "[policy.enforcement]\nconfine_docs_unknown = \"full\"\n",
        "[policy.limits]": "[policy.limits]\nconfine_docs_unknown = 1\n",
        "[policy.packages]": "[policy.packages]\nconfine_docs_unknown = 1\n",
        "[report]": "[report]\nconfine_docs_unknown = 1\n",
        "[platform.<os>]": "[platform.linux]\nconfine_docs_unknown = 1\n",
        "platforms": "[platform.confine_docs_unknown]\nchain = []\n",
    }
    lists = {}
    # Not under /tmp: confine refuses configuration files there.
    with tempfile.TemporaryDirectory(dir="/var/tmp") as work:
        os.chmod(work, 0o755)
        for table, text in probes.items():
            path = os.path.join(work, "confine.toml")
            with open(path, "w") as f:
                f.write(text)
            os.chmod(path, 0o644)
            run = subprocess.run([confinectl, "check-config", path], capture_output=True, text=True)
            m = re.search(r"\(known: ([^)]*)\)", run.stderr)
            if run.returncode != 125 or not m:
                fail(f"check-config did not refuse an unknown key in {table} naming the known ones: "
                     f"exit {run.returncode}, {run.stderr.strip()!r}")
                continue
            lists[table] = [k.strip() for k in m.group(1).split(",") if k.strip()]
    return lists


def top_level_keys(source_dir):
    """The keys Validator::run compares at the top of the file."""
    text = open(os.path.join(source_dir, "core/src/policy/config.cpp"), encoding="utf-8").read()
    m = re.search(r"std::expected<Config, Error> run\(.*?\n    }\n", text, re.S)
    if not m:
        fail("cannot find the parser's top level (Validator::run) in core/src/policy/config.cpp")
        return []
    keys = re.findall(r'\bk == "([^"]+)"', m.group(0))
    if not keys:
        fail("no top-level key found in Validator::run")
    return keys


def runner_settings(source_dir):
    """{runner: [setting]} from each built-in plugin's reject_unknown list."""
    settings = {}
    plugins = os.path.join(source_dir, "plugins")
    for runner in sorted(os.listdir(plugins)):
        directory = os.path.join(plugins, runner)
        if not os.path.isdir(directory):
            continue
        for name in sorted(os.listdir(directory)):
            if not name.endswith(".cpp"):
                continue
            text = open(os.path.join(directory, name), encoding="utf-8").read()
            for m in re.finditer(r"reject_unknown\(\{([^}]*)\}\)", text):
                settings.setdefault(runner, []).extend(re.findall(r'"([^"]+)"', m.group(1)))
    if not settings:
        fail("no runner's reject_unknown list found under plugins/")
    return settings


def check_keys(confinectl, source_dir, manpage):
    keys_section = man_section(man_text(manpage), manpage, "KEYS")
    if keys_section is None:
        return
    # Each key has an entry: its name in the tag line of a .TP, after its table's name
    # ("[policy] timeout, kill_after"), or as a table of its own ("[policy.env] ...").
    tags = [re.sub(r'^\.[A-Z]+\s*|"', "", t) for t in re.findall(r"^\.TP\n(.*)$", keys_section, re.M)]
    tags = [re.sub(r"\[\s*([\w.]+?)\.\s+(\w+)\s*\]", r"[\1.<\2>]", tag) for tag in tags]  # [platform.<os>]

    def has_entry(table, key):
        for tag in tags:
            if table in tag and has_word(tag.split(table, 1)[1].split("[", 1)[0], key):
                return True
            if table.endswith("]") and f"{table[:-1]}.{key}]" in tag:
                return True
        return False

    checked = 0
    lists = known_lists(confinectl)
    for table, keys in lists.items():
        for key in keys:
            checked += 1
            # The platforms are named in the text of the chain's entry.
            ok = has_word(keys_section, key) if table == "platforms" else has_entry(table, key)
            if not ok:
                fail(f"{table} {key}, which the parser accepts, has no entry in {manpage}'s KEYS")
    for key in top_level_keys(source_dir):
        checked += 1
        if not any(has_word(tag, key) for tag in tags):
            fail(f"the top-level key {key}, which the parser accepts, has no entry in {manpage}'s KEYS")
    for runner, keys in runner_settings(source_dir).items():
        entry = re.search(r"^\.B \[runner\." + re.escape(runner) + r"\]\n(.*?)(?=^\.TP|^\.RE)", keys_section, re.S | re.M)
        if not entry:
            fail(f"[runner.{runner}] has no entry in {manpage}'s KEYS")
            continue
        for key in keys:
            checked += 1
            if not has_word(entry.group(1), key):
                fail(f"[runner.{runner}] {key}, which its plugin accepts, is not in {manpage}'s [runner.{runner}]")
    print(f"docs-sync-test: {checked} configuration keys checked")
    check_example(confinectl, source_dir, lists)


def example_keys(text):
    """{table: {key}} the example names, set or commented out ("# key = ..."), beneath
    each table's header (commented out too: "# [policy.limits]"); "" for the top level."""
    keys, table = {}, ""
    for line in text.splitlines():
        m = re.match(r"^#?\s*\[([\w.-]+)\]\s*$", line)
        if m:
            table = m.group(1)
            continue
        m = re.match(r"^#?\s*([\w-]+)\s*=", line)
        if m:
            keys.setdefault(table, set()).add(m.group(1))
    return keys


def check_example(confinectl, source_dir, lists):
    path = os.path.join(source_dir, "config", "confine.example.toml")
    text = open(path, encoding="utf-8").read()
    named = example_keys(text)
    checked = 0

    def expect(table, key, where):
        nonlocal checked
        checked += 1
        if key not in named.get(table, set()) and f"{table}.{key}" not in named:  # a key, or a table of its own
            fail(f"{where} {key}, which the parser accepts, is not in {path} (set or commented out beneath [{table}])")

    for table, keys in lists.items():
        if table == "platforms":
            for os_name in keys:
                checked += 1
                if not has_word(text, os_name):
                    fail(f"the platform {os_name}, which the parser accepts, is not named in {path}")
            continue
        for key in keys:
            if table == "[platform.<os>]":
                checked += 1
                if not any(key in ks for t, ks in named.items() if t.startswith("platform.")):
                    fail(f"[platform.<os>] {key}, which the parser accepts, is not in {path} beneath a [platform.OS]")
            else:
                expect(table.strip("[]"), key, table)
    for key in top_level_keys(source_dir):
        checked += 1
        if key not in named.get("", set()) and not any(t == key or t.startswith(key + ".") for t in named):
            fail(f"the top-level key {key}, which the parser accepts, is not in {path}")
    for runner, keys in runner_settings(source_dir).items():
        for key in keys:
            expect(f"runner.{runner}", key, f"[runner.{runner}]")
    check_example_loads(confinectl, path)
    print(f"docs-sync-test: {checked} keys of the example configuration checked, and it loads without a warning")


def check_example_loads(confinectl, path):
    """The example as a user's ~/.config/confine/confine.toml: check-config and a run of
    `true` say no warning."""
    with tempfile.TemporaryDirectory(dir="/var/tmp") as work:  # not /tmp: refused for configuration
        os.chmod(work, 0o755)
        home, workspace = os.path.join(work, "home"), os.path.join(work, "ws")
        os.makedirs(os.path.join(home, ".config", "confine"))
        os.makedirs(workspace)
        for d in (home, os.path.join(home, ".config"), os.path.join(home, ".config", "confine")):
            os.chmod(d, 0o755)
        user_config = os.path.join(home, ".config", "confine", "confine.toml")
        with open(path, encoding="utf-8") as src, open(user_config, "w", encoding="utf-8") as dst:
            dst.write(src.read())
        os.chmod(user_config, 0o644)
        env = {k: v for k, v in os.environ.items() if not k.startswith("CONFINE_") and k != "XDG_CONFIG_HOME"}
        env["HOME"] = home
        for args in (["check-config"], ["run", "--", "true"]):
            run = subprocess.run([os.path.abspath(confinectl), *args], capture_output=True, text=True, env=env, cwd=workspace)
            said = run.stdout + run.stderr
            if "warning" in said.lower() or user_config not in said and args[0] == "check-config":
                fail(f"confinectl {' '.join(args)} with the example as {user_config}: exit {run.returncode}, {said.strip()!r}")


# --- links --------------------------------------------------------------------------


def markdown_documents(source_dir):
    documents = ["README.md", "CONTRIBUTING.md", "bench/README.md"]
    for directory in ("docs", "plugins", "examples"):
        for root, dirs, files in os.walk(os.path.join(source_dir, directory)):
            dirs.sort()
            documents += [os.path.relpath(os.path.join(root, f), source_dir) for f in sorted(files) if f.endswith(".md")]
    return documents


def prose_lines(path):
    """The lines outside fenced code blocks."""
    fenced = False
    for line in open(path, encoding="utf-8"):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if not fenced:
            yield line


def slug(heading):
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower().replace("`", ""))
    return text.replace(" ", "-")


def anchors(path):
    return {slug(m.group(1)) for line in prose_lines(path) if (m := re.match(r"^#{1,6}\s+(.*)$", line))}


def check_links(source_dir):
    checked = 0
    for document in markdown_documents(source_dir):
        path = os.path.join(source_dir, document)
        if not os.path.exists(path):
            fail(f"{document} does not exist")
            continue
        for line in prose_lines(path):
            line = re.sub(r"`[^`]*`", lambda m: m.group(0) if "](" in m.group(0) else "", line)
            for target in re.findall(r"\]\(([^)\s]+)\)", line):
                if re.match(r"^[a-z][a-z0-9+.-]*:", target):
                    continue  # https:, mailto:
                checked += 1
                file, _, fragment = target.partition("#")
                resolved = os.path.normpath(os.path.join(os.path.dirname(path), file)) if file else path
                if not os.path.exists(resolved):
                    fail(f"{document}: the link {target} leads to nothing")
                    continue
                if fragment and resolved.endswith(".md") and fragment not in anchors(resolved):
                    fail(f"{document}: the link {target} names a section {os.path.relpath(resolved, source_dir)} does not have")
    if checked == 0:
        fail("no local link found in the Markdown documents")
    print(f"docs-sync-test: {checked} links checked")


# --- quick start --------------------------------------------------------------------


def check_quickstart(source_dir):
    readme = open(os.path.join(source_dir, "README.md"), encoding="utf-8").read()
    m = re.search(r"^## Quick start.*?$(.*?)^## ", readme, re.S | re.M)
    if not m:
        fail("the README has no Quick start section")
        return
    blocks = re.findall(r"^```sh\n(.*?)^```$", m.group(1), re.S | re.M)
    commands = [b.strip() for b in blocks]
    if len(commands) != 2 or any("\n" in c for c in commands):
        fail(f"the README's quick start is not two one-line commands: {commands}")
        return
    for command in commands:
        path = os.path.join(source_dir, command.split()[0])
        if not (os.path.isfile(path) and os.access(path, os.X_OK)):
            fail(f"the quick start's command {command!r} is not an executable script of the tree")
    main_job = open(os.path.join(source_dir, commands[0].split()[0]), encoding="utf-8").read()
    for what in ("probe", "run"):
        if not re.search(r"\$confinectl\"?\s+" + what + r"\b|confinectl\"?\s+" + what + r"\b", main_job):
            fail(f"the quick start's first command ({commands[0]}) does not run confinectl {what}")
    ci = open(os.path.join(source_dir, ".ci/run"), encoding="utf-8").read()
    if not re.search(r"^(exec\s+)?" + re.escape(commands[1]) + r"\s*$", ci, re.M):
        fail(f".ci/run does not run the quick start's second command ({commands[1]})")
    print(f"docs-sync-test: quick start {commands} checked")


def main(argv):
    if len(argv) >= 2 and argv[1] == "options" and len(argv) == 5:
        check_options(*argv[2:])
    elif len(argv) >= 2 and argv[1] == "keys" and len(argv) == 5:
        check_keys(*argv[2:])
    elif len(argv) >= 2 and argv[1] == "links" and len(argv) == 3:
        check_links(argv[2])
    elif len(argv) >= 2 and argv[1] == "quickstart" and len(argv) == 3:
        check_quickstart(argv[2])
    else:
        print(__doc__, file=sys.stderr)
        return 2
    for message in failures:
        print(f"docs-sync-test: {message}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
