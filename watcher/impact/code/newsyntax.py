"""Reads code written for a newer Python than the one running: a file using Python 3.12's type
parameters (``def first[T](xs: list[T]) -> T``, ``class Box[T: Tensor](nn.Module)``, ``type
Batch = dict[str, Tensor]``) or 3.14's unparenthesised ``except A, B:`` does not parse on 3.11,
and every torch use in it would go unread. Those forms change no name a use resolves through,
so they are rewritten to their 3.11 spelling, token by token, and the file parsed again.

Line numbers never move: a type parameter list is blanked with spaces, a ``type`` statement loses
its keyword (``type X = v`` reads ``X = v``), an ``except`` list gains parentheses. Anything else
a newer Python added (PEP 701's f-strings nesting their own quotes) is left: the file stays
unparsable, and the scan says so.
"""

from __future__ import annotations

import io
import tokenize
from tokenize import NAME, NEWLINE, NL, OP, TokenInfo

__all__ = ["downgraded"]

# Tokens after which a line of code begins a statement.
STATEMENT_START = frozenset({NEWLINE, NL, tokenize.INDENT, tokenize.DEDENT, tokenize.ENCODING})
Edit = tuple[tuple[int, int], tuple[int, int], str]  # (start, end, replacement): (row, column)


def downgraded(text: str) -> str | None:
    """``text`` with the newer forms spelt as Python 3.11 reads them, or None when it holds
    none of them (or does not even tokenize)."""
    try:
        tokens = [token for token in tokenize.generate_tokens(io.StringIO(text).readline)
                  if token.type not in (tokenize.COMMENT,)]
    except (tokenize.TokenError, SyntaxError):
        return None
    edits: list[Edit] = []
    for index, token in enumerate(tokens):
        if token.type != NAME:
            continue
        if token.string in ("def", "class"):
            edits += type_parameters(tokens, index)
        elif token.string == "type" and starts_statement(tokens, index):
            edits += type_alias(tokens, index)
        elif token.string == "except":
            edits += except_list(tokens, index)
    return applied(text, edits) if edits else None


def type_parameters(tokens: list[TokenInfo], index: int) -> list[Edit]:
    """``def f[T](...)``, ``class C[T: X](...)``: the bracketed list blanked."""
    if index + 2 >= len(tokens) or tokens[index + 1].type != NAME or \
            tokens[index + 2].string != "[":
        return []
    close = matching(tokens, index + 2)
    return [] if close is None else [blank(tokens[index + 2], tokens[close])]


def type_alias(tokens: list[TokenInfo], index: int) -> list[Edit]:
    """``type X[T] = v``: the keyword dropped (and the parameters blanked), ``X = v`` left.
    ``type(x)`` or ``type = 3`` is no alias: a name must follow, then ``=`` or ``[``."""
    if index + 2 >= len(tokens) or tokens[index + 1].type != NAME:
        return []
    after = tokens[index + 2]
    keyword, name = tokens[index], tokens[index + 1]
    drop: Edit = (keyword.start, name.start, "")
    if after.string == "=":
        return [drop]
    if after.string == "[":
        close = matching(tokens, index + 2)
        if close is not None and close + 1 < len(tokens) and tokens[close + 1].string == "=":
            return [drop, blank(after, tokens[close])]
    return []


def except_list(tokens: list[TokenInfo], index: int) -> list[Edit]:
    """``except A, B:`` (or ``except* A, B:``): the types parenthesised, as 3.11 needs them.
    An ``as`` name, or brackets already there, leaves the clause as written."""
    start = index + 1
    if start < len(tokens) and tokens[start].string == "*":
        start += 1
    depth = 0
    comma = False
    for position in range(start, len(tokens)):
        token = tokens[position]
        if token.type == OP and token.string in "([{":
            depth += 1
        elif token.type == OP and token.string in ")]}":
            depth -= 1
        elif depth == 0 and token.string == ",":
            comma = True
        elif (depth == 0 and token.string == "as") or token.type in (NEWLINE, NL):
            return []  # named, or not one line: left as written
        elif depth == 0 and token.string == ":":
            if not comma or position == start:
                return []
            first = tokens[start]
            return [(first.start, first.start, "("), (token.start, token.start, ")")]
    return []


def starts_statement(tokens: list[TokenInfo], index: int) -> bool:
    return index == 0 or tokens[index - 1].type in STATEMENT_START or \
        tokens[index - 1].string == ";"


def matching(tokens: list[TokenInfo], index: int) -> int | None:
    """The index of the bracket closing the one at ``index``."""
    depth = 0
    for position in range(index, len(tokens)):
        string = tokens[position].string
        if tokens[position].type != OP:
            continue
        if string in "([{":
            depth += 1
        elif string in ")]}":
            depth -= 1
            if depth == 0:
                return position
    return None


def blank(first: TokenInfo, last: TokenInfo) -> Edit:
    """Spaces over ``first`` .. ``last`` (a list spanning lines keeps its line breaks)."""
    return (first.start, last.end, "\0")


def applied(text: str, edits: list[Edit]) -> str:
    """``text`` with each edit made, the last first so earlier positions stay right."""
    lines = text.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))

    def at(point: tuple[int, int]) -> int:
        return offsets[point[0] - 1] + point[1]

    result = text
    for start, end, replacement in sorted(edits, key=lambda edit: at(edit[0]), reverse=True):
        begin, finish = at(start), at(end)
        if replacement == "\0":  # blanked: spaces, line breaks kept
            replacement = "".join(char if char in "\r\n" else " "
                                  for char in result[begin:finish])
        result = result[:begin] + replacement + result[finish:]
    return result
