"""One-line mutants of Swift source, made mechanically: what `seeded-bugs --mutate` runs.

Each mutant changes one line of a file in one way:

- `compare`: a comparison flipped at its edge or turned round (`<` and `<=`, `>` and `>=`,
  `==` and `!=`);
- `logic`: `&&` and `||` swapped;
- `off-by-one`: `+ 1` and `- 1` swapped (also `+= 1` and `-= 1`);
- `negate`: the condition of an `if`, `guard` or `while` negated;
- `constant`: `true` and `false` swapped, the literals `0` and `1` swapped;
- `drop`: a statement that is a call or an assignment removed.

Comments, string literals, imports, attributes, compiler directives and the arguments of
`precondition`, `assert` and `fatalError` are left alone: a mutant there is either not a bug or
not one a test can see. So is code that the mutant builds do not compile (an `#if
canImport(Darwin)` branch on Linux, the `#else` of `#if DEBUG`): its mutants would build and pass
unseen.
"""

import dataclasses
import pathlib
import platform
import re
import sys


@dataclasses.dataclass(frozen=True)
class Mutant:
    file: str  # relative to the repository
    line: int  # 1-based
    operator: str
    original: str  # the line as it is
    mutated: str  # the line as the mutant has it

    def describe(self):
        return f"{self.file}:{self.line} [{self.operator}] {self.original.strip()}  →  {self.mutated.strip() or '(removed)'}"


COMPARISONS = {"<": "<=", "<=": "<", ">": ">=", ">=": ">", "==": "!=", "!=": "=="}
SKIPPED_PREFIXES = ("//", "import ", "@", "#", "precondition", "assert", "fatalError", "preconditionFailure",
                    "assertionFailure", "case ", "default:", "}", "{")
DECLARATION = re.compile(r"^(?:(?:public|package|internal|private|fileprivate|open|static|final|override|"
                         r"nonisolated|mutating|lazy|weak|unowned|@\w+)\s+)*(?:let|var|func|init|deinit|subscript|"
                         r"class|struct|enum|protocol|extension|actor|typealias|associatedtype|return|throw|"
                         r"guard|if|else|while|for|repeat|switch|do|catch|defer)\b")


def code_mask(line):
    """The positions of `line` that are code: not inside a string literal nor a `//` comment."""
    mask = [True] * len(line)
    in_string = False
    index = 0
    while index < len(line):
        char = line[index]
        if in_string:
            mask[index] = False
            if char == "\\":
                if index + 1 < len(line):
                    mask[index + 1] = False
                index += 2
                continue
            if char == '"':
                in_string = False
        elif char == '"':
            in_string = True
            mask[index] = False
        elif line.startswith("//", index):
            for rest in range(index, len(line)):
                mask[rest] = False
            break
        index += 1
    return mask


def in_code(mask, start, end):
    return all(mask[start:end])


def balanced(text):
    depth = 0
    for char in text:
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
            if depth < 0:
                return False
    return depth == 0


def mutants_of_line(file, number, line, in_multiline_string):
    stripped = line.strip()
    if not stripped or in_multiline_string or stripped.startswith(SKIPPED_PREFIXES) or stripped.startswith("///"):
        return []
    mask = code_mask(line)
    found = []

    def replace(start, end, text, operator):
        mutated = line[:start] + text + line[end:]
        if mutated != line:
            found.append(Mutant(file, number, operator, line, mutated))

    # Binary operators are written with a space each side, which keeps generics (`<T>`), arrows
    # and prefix/postfix operators out.
    for match in re.finditer(r"(?<= )(<=|>=|==|!=|<|>)(?= )", line):
        if in_code(mask, match.start(), match.end()):
            replace(match.start(), match.end(), COMPARISONS[match.group(1)], "compare")
    for match in re.finditer(r"(?<= )(&&|\|\|)(?= )", line):
        if in_code(mask, match.start(), match.end()):
            replace(match.start(), match.end(), "||" if match.group(1) == "&&" else "&&", "logic")
    for match in re.finditer(r"(?<= )([+-])(=?) 1\b(?!\.)", line):
        if in_code(mask, match.start(), match.end()):
            swapped = ("-" if match.group(1) == "+" else "+") + match.group(2) + " 1"
            replace(match.start(), match.end(), swapped, "off-by-one")
    for match in re.finditer(r"\b(true|false)\b", line):
        if in_code(mask, match.start(), match.end()):
            replace(match.start(), match.end(), "false" if match.group(1) == "true" else "true", "constant")
    for match in re.finditer(r"(?<![\w.$])([01])(?![\w.])", line):
        if in_code(mask, match.start(), match.end()):
            replace(match.start(), match.end(), "1" if match.group(1) == "0" else "0", "constant")

    condition = re.match(r"^(\s*(?:\} else )?)(if|guard|while) (.+?)( else)? \{$", line)
    if condition and condition.group(2) == "guard" and not condition.group(4):
        condition = None
    if condition and not re.search(r"\b(let|var|case)\b|#available", condition.group(3)) \
            and balanced(condition.group(3)) and in_code(mask, 0, len(line.rstrip())):
        prefix, keyword, expression, otherwise = condition.groups()
        found.append(Mutant(file, number, "negate", line,
                            f"{prefix}{keyword} !({expression}){otherwise or ''} {{"))

    body = stripped
    if (not DECLARATION.match(body) and balanced(body) and not body.endswith(("{", "in", ",", "(", "[", "?", ":"))
            and not body.startswith((".", "?", "&&", "||", "+", "-", "*", "/", ")", "]", "try ", "await "))
            and in_code(mask, 0, len(line.rstrip()))
            and (re.match(r"^[\w.\[\]()!?]+ (?:[-+*/|&]?=) ", body) or re.match(r"^[\w.]+(?:\(.*\))$", body))):
        indentation = line[: len(line) - len(line.lstrip())]
        found.append(Mutant(file, number, "drop", line, indentation))
    return found


# What the mutant builds' compiler answers for the conditions of `#if`: this platform's, a debug
# build, every trait on (`--enable-all-traits`), this toolchain. A condition with anything else
# in it counts as compiled: both branches.
BUILD_CONDITIONS = {
    "canImport(Darwin)": sys.platform == "darwin", "canImport(ObjectiveC)": sys.platform == "darwin",
    "canImport(Glibc)": sys.platform.startswith("linux"), "canImport(Musl)": False, "canImport(WinSDK)": False,
    "canImport(FoundationNetworking)": sys.platform.startswith("linux"), "canImport(Testing)": True,
    "os(Linux)": sys.platform.startswith("linux"), "os(macOS)": sys.platform == "darwin", "os(Android)": False,
    "os(Windows)": False, "os(iOS)": False, "os(tvOS)": False, "os(watchOS)": False, "os(visionOS)": False,
    "compiler(>=6.2)": True, "DEBUG": True, "BATON_MODEL_CHECK": True, "Macros": True, "Metrics": True,
    "Lifecycle": True, "Logging": True, "AsyncHTTPClient": True,
    "arch(x86_64)": platform.machine() in ("x86_64", "AMD64"),
    "arch(arm64)": platform.machine() in ("arm64", "aarch64"),
    "arch(i386)": False, "arch(arm)": False,
}


def condition_value(condition):
    """`True` or `False` when `condition` (an `#if`'s) is made of ``BUILD_CONDITIONS`` only;
    `None` when anything else is in it."""
    text = condition.split("//")[0].strip()
    for atom, value in sorted(BUILD_CONDITIONS.items(), key=lambda item: -len(item[0])):
        pattern = re.escape(atom) if "(" in atom else rf"\b{re.escape(atom)}\b"
        text = re.sub(pattern, f" {value} ", text)
    text = text.replace("&&", " and ").replace("||", " or ").replace("!", " not ")
    if re.search(r"[^\sA-Za-z()]", text) or set(re.findall(r"[A-Za-z]+", text)) - {"True", "False", "and", "or", "not"}:
        return None
    try:
        return bool(eval(text, {"__builtins__": {}}))  # only True, False, and, or, not, parentheses
    except SyntaxError:
        return None


def compiled_lines(lines):
    """Whether each line is compiled in the mutant builds: `False` inside an `#if` branch that
    ``BUILD_CONDITIONS`` rule out (say `#if canImport(Darwin)` on Linux, or a `#else` of
    `#if DEBUG`)."""
    result = []
    stack = []  # per open `#if`: (this branch compiled, an earlier branch was taken for certain)
    for line in lines:
        stripped = line.strip()
        directive = re.match(r"#(if|elseif|else|endif)\b(.*)", stripped)
        if directive:
            kind, condition = directive.groups()
            if kind == "if":
                value = condition_value(condition)
                stack.append((value is not False, value is True))
            elif kind == "elseif" and stack:
                _, taken = stack[-1]
                value = condition_value(condition)
                stack[-1] = (not taken and value is not False, taken or value is True)
            elif kind == "else" and stack:
                _, taken = stack[-1]
                stack[-1] = (not taken, True)
            elif kind == "endif" and stack:
                stack.pop()
            result.append(False)
            continue
        result.append(all(compiled for compiled, _ in stack))
    return result


def mutants_of_file(repo, path):
    relative = str(path.relative_to(repo))
    lines = path.read_text().split("\n")
    compiled = compiled_lines(lines)
    result = []
    in_multiline = False
    for index, line in enumerate(lines):
        toggles = line.count('"""')
        if not in_multiline and compiled[index]:
            result.extend(mutants_of_line(relative, index + 1, line, toggles > 0))
        if toggles % 2 == 1:
            in_multiline = not in_multiline
    return result


INLINABLE = re.compile(r"@(?:inlinable|_alwaysEmitIntoClient|_transparent)\b")


def inlinable_lines(text):
    """The line numbers (1-based) of the declarations marked `@inlinable`,
    `@_alwaysEmitIntoClient` or `@_transparent`, from the attribute to the body's closing brace.

    Their code is compiled into the modules that call them too, and the per-test coverage does
    not always count it there: a test may run such a line without the map saying so."""
    lines = text.split("\n")
    result = set()
    pending = None  # the line of an attribute whose body has not opened yet
    start = None  # the first line of the region being walked
    depth = 0
    in_multiline = False
    for index, line in enumerate(lines):
        number = index + 1
        toggles = line.count('"""')
        if in_multiline or toggles:
            if toggles % 2 == 1:
                in_multiline = not in_multiline
            if start is not None:
                result.add(number)
            continue
        mask = code_mask(line)
        code = "".join(char if mask[position] else " " for position, char in enumerate(line))
        if start is None and pending is None and INLINABLE.search(code):
            pending = number
        for char in code:
            if start is None:
                if pending is not None and char == "{":
                    start, pending, depth = pending, None, 1
            elif char == "{":
                depth += 1
            elif char == "}":
                depth -= 1
                if depth == 0:
                    result.update(range(start, number + 1))
                    start = None
                    break
        if start is not None:
            result.add(number)
    return result


def mutants_under(repo, paths):
    files = []
    for path in paths:
        path = (repo / path).resolve() if not pathlib.Path(path).is_absolute() else pathlib.Path(path)
        if path.is_dir():
            files.extend(sorted(path.rglob("*.swift")))
        elif path.suffix == ".swift":
            files.append(path)
        else:
            raise ValueError(f"{path}: not a Swift file or a folder")
    return [mutant for file in files for mutant in mutants_of_file(repo, file)]


def spread(mutants, limit):
    """At most `limit` of `mutants`, evenly spread over them (the same ones every run)."""
    if not limit or len(mutants) <= limit:
        return mutants
    step = len(mutants) / limit
    return [mutants[int(index * step)] for index in range(limit)]


def module_of(file):
    """`Sources/BatonLocks/Lock.swift` → `BatonLocks`."""
    parts = pathlib.PurePath(file).parts
    return parts[1] if len(parts) > 2 and parts[0] == "Sources" else None
