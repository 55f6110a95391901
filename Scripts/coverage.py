"""Which tests run which lines: the per-test line coverage that `seeded-bugs --mutate` uses to
run, on each mutant, only the tests that execute its line.

The tests are built once with coverage instrumentation (a scratch path of their own) and run one
at a time; after each run, `llvm-cov` (the toolchain's, beside `swift`) exports the lines of the
mutated files that ran. The map is kept in the scratch folder under a key made from every file
under `Sources/` and `Tests/` and the manifest, so a later run of the same code reuses it, and a
run cut short goes on where it stopped.

A line with no count at all in the export (a declaration, a line inside a larger expression) is
unknown: a mutant there runs every test of its pattern. A line with a count of zero after every
test is run by none of them: a mutant there cannot be caught, and is reported `uncovered`
without being built.
"""

import hashlib
import json
import pathlib
import re
import shutil
import subprocess
import time


def tool(name):
    """A tool of the toolchain in use (`llvm-cov`, `llvm-profdata`), not an older one on PATH."""
    swift = shutil.which("swift")
    if swift is None:
        raise RuntimeError("swift is not on PATH")
    found = pathlib.Path(swift).resolve().parent / name
    if not found.is_file():
        raise RuntimeError(f"{name} is not beside {swift}")
    return str(found)


def code_key(tree):
    """A hash of every file under `Sources/` and `Tests/` and of the manifest: coverage
    measured for one key holds for the same code only."""
    digest = hashlib.sha256()
    files = [tree / "Package.swift"]
    for folder in ("Sources", "Tests"):
        files.extend(sorted(path for path in (tree / folder).rglob("*") if path.is_file()))
    for path in files:
        digest.update(str(path.relative_to(tree)).encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


def filter_of(tests):
    """A `swift test --filter` that runs exactly `tests` (identifiers as `swift test list` prints
    them). A Swift Testing identifier may be followed by `/` and more in the name matched."""
    return "^(?:" + "|".join(re.escape(test) for test in tests) + ")(?:$|/)"


def exit_tests(tree, tests):
    """The Swift Testing tests among `tests` whose function has an exit test
    (`processExitsWith`): its child process, which is meant to stop with a fatal error, writes
    no coverage, so what it runs is not in the map."""
    with_exit_tests = set()
    for path in (tree / "Tests").rglob("*.swift"):
        text = path.read_text()
        if "processExitsWith" not in text:
            continue
        # Each function's text runs to the next function (or the end): enough to say whether
        # its body has an exit test.
        starts = [(match.start(), match.group(1)) for match in re.finditer(r"\bfunc\s+(\w+)\s*\(", text)]
        for index, (start, name) in enumerate(starts):
            end = starts[index + 1][0] if index + 1 < len(starts) else len(text)
            if "processExitsWith" in text[start:end]:
                with_exit_tests.add(name)
    return [test for test in tests
            if test.endswith(")") and re.sub(r"\(.*$", "", test.rsplit("/", 1)[-1]) in with_exit_tests]


class Coverage:
    """Lines run, per test, in the files mutated."""

    def __init__(self, tests, ran, known, seconds, exiting=()):
        self.tests = tests  # every test measured, in order
        self.ran = ran  # test → file → set of line numbers run
        self.known = known  # file → set of line numbers with a count
        self.seconds = seconds  # test → how long it ran alone, instrumented, with its process
        self.exiting = list(exiting)  # the tests with an exit test, which the map cannot see into
        # Whether every test is a Swift Testing one (`name()`), which the test binary runs
        # straight, with `--testing-library swift-testing`.
        self.swift_testing_only = all(test.endswith(")") for test in tests)

    def tests_running(self, file, line):
        """The tests that run `line` of `file`: a list (empty when none does), or `None` when
        the line has no count of its own and any test might."""
        if line not in self.known.get(file, ()):
            return None
        running = [test for test in self.tests if line in self.ran.get(test, {}).get(file, ())]
        # An exit test may run the line in its child process: it runs with any test that does.
        return running + [test for test in self.exiting if test not in running] if running else []

    def time_limit(self, tests, ceiling, floor=20):
        """A mutant's time limit when it runs `tests`: three times as long as they took one by one
        in the coverage pass (instrumented, each in a process of its own, so already more than
        they take together), plus 5 s, at least `floor` and at most `ceiling`. `ceiling` when a
        test's time was not measured."""
        if any(test not in self.seconds for test in tests):
            return ceiling
        return min(ceiling, max(floor, int(3 * sum(self.seconds[test] for test in tests)) + 5))


def lcov_lines(text, tree):
    """`file → (lines with a count, lines with a count above zero)` of an lcov export."""
    known, ran = {}, {}
    file = None
    for line in text.splitlines():
        if line.startswith("SF:"):
            path = pathlib.Path(line[3:])
            try:
                file = str(path.resolve().relative_to(tree.resolve()))
            except ValueError:
                file = None
            if file is not None:
                known.setdefault(file, set())
                ran.setdefault(file, set())
        elif line.startswith("DA:") and file is not None:
            number, count = line[3:].split(",")[:2]
            known[file].add(int(number))
            if int(count) > 0:
                ran[file].add(int(number))
    return known, ran


def measure(tree, files, pattern, flags, scratch, cache_folder, run, log):
    """The per-test coverage of `files` by the tests matching `pattern`.

    `run(command, log_file, timeout, env)` runs a command in `tree`, with `env` added to its
    environment, and returns its exit status (or `None` after the timeout); `log(text)` reports
    progress. Returns a `Coverage`, or raises
    `RuntimeError` when the instrumented build fails.
    """
    key = code_key(tree)
    cache_folder.mkdir(parents=True, exist_ok=True)
    wanted = sorted(files)
    name = hashlib.sha256("\n".join([key, pattern, *wanted]).encode()).hexdigest()[:16]
    cache_file = cache_folder / f"coverage-{name}.json"
    cached = json.loads(cache_file.read_text()) if cache_file.is_file() else {}
    log_file = cache_folder / "coverage.log"
    log_file.unlink(missing_ok=True)

    command = ["swift", "build", "--build-tests", *flags, "--enable-code-coverage", "--scratch-path", scratch]
    started = time.monotonic()
    if run(command, log_file, None) != 0:
        raise RuntimeError(f"the build with coverage failed; see {log_file}")
    listing = subprocess.run(
        ["swift", "test", "list", "--skip-build", *flags, "--enable-code-coverage", "--scratch-path", scratch],
        cwd=tree, capture_output=True, text=True)
    if listing.returncode != 0:
        raise RuntimeError(f"swift test list failed: {listing.stderr.strip()[:500]}")
    matcher = re.compile(pattern)
    tests = [line.strip() for line in listing.stdout.splitlines() if matcher.search(line.strip())]
    if not tests:
        raise RuntimeError(f"no test matches {pattern}")

    binary = tree / scratch / "debug" / "BatonPackageTests.xctest"
    codecov = tree / scratch / "debug" / "codecov"
    seconds = {test: took for test, took in cached.get("seconds", {}).items() if test in tests}
    ran = {test: {file: set(lines) for file, lines in entry.items()}
           for test, entry in cached.get("ran", {}).items() if test in seconds}
    known = {file: set(lines) for file, lines in cached.get("known", {}).items()}
    todo = [test for test in tests if test not in ran]
    log(f"coverage of {len(wanted)} files by {len(tests)} tests: {len(tests) - len(todo)} measured before, "
        f"{len(todo)} to run (built in {time.monotonic() - started:.0f} s)")
    for number, test in enumerate(todo, 1):
        shutil.rmtree(codecov, ignore_errors=True)
        codecov.mkdir(parents=True)
        test_started = time.monotonic()
        if test.endswith(")"):
            # A Swift Testing test: the binary straight, a fraction of a second, not SwiftPM's plan,
            # an XCTest pass and a merge of its own.
            status = run([str(binary), "--testing-library", "swift-testing", "--filter", filter_of([test])],
                         log_file, 600, {"LLVM_PROFILE_FILE": str(codecov / "test-%p.profraw")})
        else:
            status = run(["swift", "test", "--skip-build", *flags, "--enable-code-coverage", "--scratch-path",
                          scratch, "--filter", filter_of([test])], log_file, 600)
        seconds[test] = time.monotonic() - test_started
        if status != 0:
            log(f"  coverage: {test} {'timed out' if status is None else 'failed'} on the unmutated code; "
                f"its lines are counted as far as it ran")
        profile = codecov / "default.profdata"
        if not profile.is_file():
            raws = sorted(str(path) for path in codecov.glob("*.profraw"))
            if not raws:
                log(f"  coverage: {test} left no profile; it counts as running nothing")
                ran[test] = {}
                continue
            subprocess.run([tool("llvm-profdata"), "merge", "-sparse", *raws, "-o", str(profile)], check=True)
        export = subprocess.run(
            [tool("llvm-cov"), "export", "-format=lcov", "-instr-profile", str(profile), str(binary),
             "-sources", *[str(tree / file) for file in wanted]],
            capture_output=True, text=True, check=True)
        lines_known, lines_ran = lcov_lines(export.stdout, tree)
        for file, lines in lines_known.items():
            known.setdefault(file, set()).update(lines)
        ran[test] = lines_ran
        if number % 10 == 0 or number == len(todo):
            log(f"  coverage: {number}/{len(todo)} tests measured")
            cache_file.write_text(json.dumps({
                "ran": {test: {file: sorted(lines) for file, lines in entry.items() if lines}
                        for test, entry in ran.items()},
                "known": {file: sorted(lines) for file, lines in known.items()},
                "seconds": seconds,
            }))
    return Coverage(tests, ran, known, seconds, exit_tests(tree, tests))
