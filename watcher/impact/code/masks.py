"""Whether the attention masks a file can pass may mask a whole query row: 2.5's SDPA change
(a fully masked row gives zeros, not NaN) cannot reach a call whose mask keeps a key in every
row. Read from the file alone, as far as it shows every mask it makes:

- ``None`` or a string sentinel (``mask = "causal"``, replaced before the call) masks nothing;
- a finite additive bias (``torch.full(..., torch.finfo(dtype).min)``, ``zeros``,
  ``masked_fill(m, -1e4)``, ``(1 - m) * -10000.0``): softmax over finite values is never NaN,
  before 2.5 or after;
- a causal mask, which keeps each row's own key: ``tril`` of ones, ``triu`` of -inf with
  ``diagonal=1``, ``nn.Transformer.generate_square_subsequent_mask``, positions compared
  (``q_pos >= k_pos`` of ``arange``s), ``eye``, or'ed with anything, and'ed with another that
  keeps the diagonal, or plus a finite bias; and any mask whose diagonal its function then sets
  attended, unconditionally and for good (``allowed[:, idx, idx] = True``, ``idx`` an
  ``arange``: the usual guard against fully masked rows). Boolean masks are read as SDPA reads
  them (True attends); only SDPA's own calls are asked.

A local name is followed through what its function assigns it (where the function's last
assignment before the read is one of its own statements and no loop or later assignment can
bring another, through that one alone: ``mask = full(-inf)`` then ``mask = triu(mask, 1)``); a
parameter through what the file's calls give it (a keyword of its name, or a variable of its
name passed on, as ``layer(h, start_pos, freqs_cis, mask)`` hands a model's mask down its
blocks; a call naming a function of the file, ``self.invert(mask)``, gives that function's
parameters only) besides its default; ``self.x`` through every assignment and
``register_buffer`` of the file; a call of a function of the file through what it returns
(one element of the tuples it returns, where ``x, mask = build(...)`` unpacks them). A
parameter no call of the file gives a mask (a public ``forward(x, mask)``), a mask made from
padding or lengths, or any expression not read above may mask a row: the call stays reached.
(A mask passed on by position under another name is not seen; the file's own givers are taken
to be all of them.)
"""

from __future__ import annotations

import ast
import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Literal

from watcher.impact.code.versions import callee_name

__all__ = ["MASKED_CALL", "MASK_OPTIONS", "MaskReader", "mask_argument"]

# The option SDPA takes its mask under, and its position (query, key, value, attn_mask).
MASK_OPTIONS = ("attn_mask",)
MASK_POSITION = 3
# The call whose masks are read: SDPA itself, where a boolean mask's True attends
# (nn.MultiheadAttention's True masks out, so its calls are not read this way).
MASKED_CALL = "scaled_dot_product_attention"
# What a value can be: no mask; finite values only; a causal mask (each row keeps its own key);
# all attended (``ones``: True, or +1 added); all -inf (every row masked, safe only once
# ``triu`` keeps the diagonal); anything; or the name itself again.
Kind = Literal["none", "finite", "causal", "ones", "ninf", "unknown", "cycle"]
DEPTH = 16  # steps of names, returns and calls followed; deeper is unknown
# Expressions read for one call at most: a file whose names feed each other in many ways
# (open_clip's transformer) would otherwise take exponential time; past it, unknown.
BUDGET = 4000
# Methods that keep which entries a tensor masks: a view, a copy, a cast, a move.
KEEPING = frozenset({"to", "type_as", "unsqueeze", "expand", "expand_as", "view", "reshape",
                     "repeat", "clone", "contiguous", "float", "half", "bfloat16", "double",
                     "cuda", "cpu", "detach", "squeeze", "type", "requires_grad_", "unsqueeze_",
                     "bool"})
FILLS = frozenset({"full", "new_full", "full_like"})
ZEROS = frozenset({"zeros", "zeros_like", "new_zeros"})
ONES = frozenset({"ones", "ones_like", "new_ones"})
INFINITIES = frozenset({"inf", "infinity", "nan"})
# Packages whose names, imported with ``from``, are never functions of the file.
PACKAGES = frozenset({"torch", "numpy", "math", "einops"})
Function = ast.FunctionDef | ast.AsyncFunctionDef
Scope = int  # id() of the function a name lives in; 0 for the module
Value = tuple[ast.expr | None, Scope]  # an expression, read in the scope it is written in


def mask_argument(call: ast.Call) -> ast.expr | None:
    """The mask a call passes: by keyword, else SDPA's fourth positional argument."""
    for keyword in call.keywords:
        if keyword.arg in MASK_OPTIONS:
            return keyword.value
    return call.args[MASK_POSITION] if len(call.args) > MASK_POSITION and not any(
        isinstance(argument, ast.Starred) for argument in call.args) else None


@dataclass
class MaskReader:
    """The masks of one parsed file, what each name is given gathered once."""

    tree: ast.Module
    _local: dict[tuple[Scope, str], list[Value]] = field(default_factory=dict)
    _attributes: dict[str, list[Value]] = field(default_factory=dict)  # ``self.x``
    _passed: dict[str, list[Value]] = field(default_factory=dict)  # parameter name -> values
    # What a call of a function of the file by its name (``build(m)``, ``self.build(m)``)
    # gives that function's parameters: (function name, parameter name) -> values.
    _given_to: dict[tuple[str, str], list[Value]] = field(default_factory=dict)
    _scope_names: dict[Scope, str] = field(default_factory=dict)
    # Lines of each function's own assignment statements (run whenever it runs, in order), and
    # of its loops (where a later assignment can reach an earlier line).
    _top: dict[Scope, set[int]] = field(default_factory=dict)
    _loops: dict[Scope, list[tuple[int, int]]] = field(default_factory=dict)
    _parameters: dict[Scope, dict[str, ast.expr | None]] = field(default_factory=dict)
    _functions: dict[str, list[Function]] = field(default_factory=dict)
    _scope_of: dict[int, Scope] = field(default_factory=dict)  # id(call) -> its scope
    _read: bool = False
    _left: int = 0  # of the budget of the call being read
    _modules: set[str] = field(default_factory=set)  # names the file imports packages under
    _masked: dict[int, list[ast.Call]] = field(default_factory=dict)  # SDPA calls by line
    # Lines each local name is assigned on (``_local``'s values in the same order).
    _lines: dict[tuple[Scope, str], list[int]] = field(default_factory=dict)
    # Names a function's own statement leaves None from its line on: ``if mask is not None:
    # raise ...`` or ``assert mask is None`` -> (first line, last line) of that statement.
    _nulled: dict[tuple[Scope, str], tuple[int, int]] = field(default_factory=dict)

    def masked_calls(self, line: int) -> list[ast.Call]:
        """The SDPA calls starting on ``line``."""
        self._gather()
        return self._masked.get(line, [])

    def keeps_rows(self, call: ast.Call) -> bool:
        """Whether every mask ``call`` can be given keeps a key in each row."""
        self._gather()
        argument = mask_argument(call)
        if argument is None:
            return False
        self._left = BUDGET
        kind = self._kind(argument, self._scope_of.get(id(call), 0), DEPTH, frozenset())
        return kind in ("none", "finite", "causal", "ones")

    # ---- what the file gives each name -------------------------------------------------------
    def _gather(self) -> None:
        if self._read:
            return
        self._read = True
        calls: list[tuple[ast.Call, Scope]] = []
        pending: list[tuple[ast.AST, Scope]] = [(self.tree, 0)]
        while pending:
            node, scope = pending.pop()
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                self._function(node)
                inner = id(node)
                pending.extend((child, inner) for child in node.body)
                pending.extend((default, scope) for default in (
                    *node.args.defaults, *filter(None, node.args.kw_defaults)))
                continue
            if isinstance(node, ast.Assign):
                forced = diagonal_forced(node)
                if forced is not None and node.lineno in self._top.get(scope, ()):
                    # ``allowed[:, idx, idx] = True`` as one of its function's own statements:
                    # from here on the name holds a mask keeping each row's own key
                    self._bind(scope, forced[0], Forced(forced[1]), node.lineno)
                for target in node.targets:
                    if forced is None or not isinstance(target, ast.Subscript):
                        self._assign(target, node.value, scope, node.lineno)
            elif isinstance(node, ast.AnnAssign) and node.value is not None:
                self._assign(node.target, node.value, scope, node.lineno)
            elif isinstance(node, ast.AugAssign):
                self._assign(node.target, None, scope, node.lineno)
            elif isinstance(node, ast.NamedExpr):
                self._assign(node.target, node.value, scope, node.lineno)
            elif isinstance(node, ast.For | ast.AsyncFor):
                self._assign(node.target, None, scope, node.lineno)
                self._loop(node, scope)
            elif isinstance(node, ast.While):
                self._loop(node, scope)
            elif isinstance(node, ast.With | ast.AsyncWith):
                for item in node.items:
                    if item.optional_vars is not None:
                        self._assign(item.optional_vars, None, scope, node.lineno)
            elif isinstance(node, ast.Call):
                calls.append((node, scope))
            elif isinstance(node, ast.Import):
                self._modules.update((alias.asname or alias.name).partition(".")[0]
                                     for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and (node.module or "").partition(".")[0] \
                    in PACKAGES:
                # ``from torch.nn import functional as F``: a package's names, modules or not
                self._modules.update(alias.asname or alias.name for alias in node.names)
            pending.extend((child, scope) for child in ast.iter_child_nodes(node))
        # After the walk: whether a call is a package's needs every import of the file.
        for call, scope in calls:
            self._call_gives(call, scope)
            if callee_name(call.func) == MASKED_CALL:
                self._masked.setdefault(call.lineno, []).append(call)

    def _function(self, node: Function) -> None:
        self._functions.setdefault(node.name, []).append(node)
        arguments = node.args
        positional = [*arguments.posonlyargs, *arguments.args]
        defaults: list[ast.expr | None] = [
            *([None] * (len(positional) - len(arguments.defaults))), *arguments.defaults]
        parameters = {argument.arg: default
                      for argument, default in zip(positional, defaults, strict=True)}
        parameters.update({argument.arg: default for argument, default in
                           zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True)})
        self._parameters[id(node)] = parameters
        self._scope_names[id(node)] = node.name
        self._top[id(node)] = {statement.lineno for statement in node.body
                               if isinstance(statement, ast.Assign | ast.AnnAssign)}
        for statement in node.body:
            name = nulled_by(statement)
            if name is not None and (id(node), name) not in self._nulled:
                self._nulled[(id(node), name)] = (
                    statement.lineno, statement.end_lineno or statement.lineno)

    def _loop(self, node: ast.For | ast.AsyncFor | ast.While, scope: Scope) -> None:
        self._loops.setdefault(scope, []).append((node.lineno, node.end_lineno or node.lineno))

    def _call_gives(self, node: ast.Call, scope: Scope) -> None:
        self._scope_of[id(node)] = scope
        if self._of_a_package(node.func):
            return  # ``F.scaled_dot_product_attention(attn_mask=m)`` gives no parameter here
        callee = self._function_called(node.func)
        for keyword in node.keywords:
            if keyword.arg is not None:
                self._give(callee, keyword.arg, (keyword.value, scope))
        for argument in node.args:
            if isinstance(argument, ast.Name):  # a variable handed on under its own name
                self._give(callee, argument.id, (argument, scope))
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr == "register_buffer" and \
                len(node.args) >= 2 and isinstance(node.args[0], ast.Constant) and \
                isinstance(node.args[0].value, str):
            self._attributes.setdefault(node.args[0].value, []).append((node.args[1], scope))

    def _give(self, callee: str | None, parameter: str, value: Value) -> None:
        """A call of a function of the file gives its own parameters; any other call (a
        module, an object's method) may be of any function taking that parameter."""
        if callee is not None:
            self._given_to.setdefault((callee, parameter), []).append(value)
        else:
            self._passed.setdefault(parameter, []).append(value)

    def _function_called(self, func: ast.expr) -> str | None:
        """The function of the file a call names (``build(...)``, ``self.build(...)``)."""
        name = callee_name(func)
        if not name or name not in self._functions:
            return None
        if isinstance(func, ast.Name) or (isinstance(func, ast.Attribute) and isinstance(
                func.value, ast.Name) and func.value.id in ("self", "cls")):
            return name
        return None

    def _of_a_package(self, func: ast.expr) -> bool:
        """A call of an imported module's function (``torch.x``, ``F.x``, ``np.x``): it
        hands nothing to a function of this file."""
        while isinstance(func, ast.Attribute):
            func = func.value
        return isinstance(func, ast.Name) and func.id in self._modules

    def _assign(self, target: ast.expr, value: ast.expr | None, scope: Scope,
                line: int) -> None:
        if isinstance(target, ast.Name):
            self._bind(scope, target.id, value, line)
        elif attribute_of_self(target) is not None:
            self._attributes.setdefault(str(attribute_of_self(target)), []).append(
                (value, scope))
        elif isinstance(target, ast.Tuple | ast.List):
            elements = target.elts
            starred = any(isinstance(element, ast.Starred) for element in elements)
            for index, element in enumerate(elements):
                self._assign(element, None if starred else unpacked(value, index, len(elements)),
                             scope, line)
        elif isinstance(target, ast.Starred):
            self._assign(target.value, None, scope, line)
        elif isinstance(target, ast.Subscript):
            # ``mask[..., pos + 1:] = finfo.min``: some entries of the mask replaced (the name
            # read as the statement's line has it: the mask before the write)
            stored = target.value
            while isinstance(stored, ast.Subscript):
                stored = stored.value
            if isinstance(stored, ast.Name) or attribute_of_self(stored) is not None:
                self._assign(stored, Stored(stored, value), scope, line)

    def _bind(self, scope: Scope, name: str, value: ast.expr | None, line: int) -> None:
        self._local.setdefault((scope, name), []).append((value, scope))
        self._lines.setdefault((scope, name), []).append(line)

    # ---- what a value can be -------------------------------------------------------------------
    def _kind(self, node: ast.expr | None, scope: Scope, depth: int,
              seen: frozenset[object]) -> Kind:
        self._left -= 1
        if node is None or depth <= 0 or self._left < 0:
            return "unknown"
        if isinstance(node, ast.Constant) and (node.value is None or isinstance(node.value, str)):
            return "none"
        if finite_number(node):
            return "finite"  # a number added to every score (``min_dtype = finfo(dtype).min``)
        if isinstance(node, ast.Constant):
            return "unknown"
        if isinstance(node, ast.IfExp):
            return join(self._kind(node.body, scope, depth - 1, seen),
                        self._kind(node.orelse, scope, depth - 1, seen))
        if isinstance(node, ast.Name):
            return self._name(node.id, scope, depth, seen, getattr(node, "lineno", 0))
        if isinstance(node, Element):
            called = self._function_called(node.call.func)
            return "unknown" if called is None else self._returned(called, depth, seen, node)
        if isinstance(node, Forced):
            return "causal" if self._positions(node.index, scope, depth - 1) else "unknown"
        if isinstance(node, Stored):
            # Finite values written into a finite bias leave it finite; any other write (-inf,
            # False, a padding mask) may empty a row.
            base = self._kind(node.base, scope, depth - 1, seen)
            value = self._kind(node.value, scope, depth - 1, seen)
            return base if base in ("finite", "cycle") and value == "finite" else "unknown"
        attribute = attribute_of_self(node)
        if attribute is not None:
            return self._values(("self", attribute), self._attributes.get(attribute, []),
                                depth, seen)
        if isinstance(node, ast.Subscript):
            return self._kind(node.value, scope, depth - 1, seen)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr | ast.BitAnd):
            return self._combined(node.op, [node.left, node.right], scope, depth, seen)
        if isinstance(node, ast.BinOp):
            return self._arithmetic(node, scope, depth, seen)
        if isinstance(node, ast.Compare):
            return "causal" if self._positions_compared(node, scope, depth) else "unknown"
        if isinstance(node, ast.Call):
            return self._call(node, scope, depth, seen)
        return "unknown"

    def _name(self, name: str, scope: Scope, depth: int, seen: frozenset[object],
              line: int = 0) -> Kind:
        key = (scope, name)
        nulled = self._nulled.get(key)
        if nulled is not None and line > nulled[1] and all(
                assigned < nulled[0] for assigned in self._lines.get(key, ())):
            return "none"  # past ``if mask is not None: raise``, with nothing assigned since
        latest = self._latest(key, line)
        if latest is not None:  # one assignment, read as what it was given then
            values, last = latest
            point = (scope, name, last)
            return "cycle" if point in seen else join(*self._judged(point, values, depth, seen))
        if key in seen:
            return "cycle"  # adds nothing new (``mask = mask.to(device)``)
        local = self._local.get(key, [])
        parameters = self._parameters.get(scope, {})
        if name in parameters:
            given = [*self._passed.get(name, []),
                     *self._given_to.get((self._scope_names.get(scope, ""), name), [])]
            given_kinds = self._judged(key, given, depth, seen)
            # Only a default, or itself reshaped: no call of the file gives it a mask, so any
            # caller's may come.
            if not any(kind != "cycle" for kind in given_kinds):
                return "unknown"
            default = parameters[name]
            rest = [*([(default, 0)] if default is not None else []), *local]
            return join(*given_kinds, *self._judged(key, rest, depth, seen))
        if local:
            return join(*self._judged(key, local, depth, seen))
        if scope and (0, name) in self._local:  # a module-level name
            return self._name(name, 0, depth - 1, seen)
        return "unknown"

    def _latest(self, key: tuple[Scope, str], line: int) -> tuple[list[Value], int] | None:
        """What a name read on ``line`` holds when its function's last assignment before it is
        one of its own statements (``mask = full(-inf)``, then ``mask = triu(mask, 1)``):
        that assignment's values, and its line. None where another may reach the read: an
        assignment after it, or the read inside a loop."""
        lines = self._lines.get(key)
        if line <= 0 or not lines or any(assigned > line for assigned in lines):
            return None
        prior = [assigned for assigned in lines if assigned < line]
        scope = key[0]
        if not prior or max(prior) not in self._top.get(scope, ()):
            return None
        if any(start <= line <= end for start, end in self._loops.get(scope, ())):
            return None
        last = max(prior)
        return [value for value, assigned in zip(self._local[key], lines, strict=True)
                if assigned == last], last

    def _combined(self, op: ast.operator, operands: list[ast.expr], scope: Scope, depth: int,
                  seen: frozenset[object]) -> Kind:
        """Boolean masks combined (True attends): or'ed, a row keeps its key where either
        keeps it; and'ed, only where both keep the diagonal."""
        kinds = [self._kind(operand, scope, depth - 1, seen) for operand in operands]
        if isinstance(op, ast.BitOr):
            return "causal" if "causal" in kinds else "unknown"
        return "causal" if all(kind == "causal" for kind in kinds) else "unknown"

    def _values(self, key: object, values: list[Value], depth: int,
                seen: frozenset[object]) -> Kind:
        if key in seen:
            return "cycle"
        kinds = self._judged(key, values, depth, seen)
        return join(*kinds) if kinds else "unknown"

    def _judged(self, key: object, values: list[Value], depth: int,
                seen: frozenset[object]) -> list[Kind]:
        inner = seen | {key}
        return [self._kind(value, scope, depth - 1, inner) for value, scope in values]

    def _arithmetic(self, node: ast.BinOp, scope: Scope, depth: int,
                    seen: frozenset[object]) -> Kind:
        if isinstance(node.op, ast.Mult | ast.Div) and (
                finite_number(node.left) or finite_number(node.right)):
            return "finite"  # ``(1 - mask) * -10000.0``: a bounded mask scaled
        if isinstance(node.op, ast.Add | ast.Sub):
            left = self._kind(node.left, scope, depth - 1, seen)
            right = self._kind(node.right, scope, depth - 1, seen)
            if {left, right} & {"unknown", "ninf"}:
                return "unknown"
            if "causal" in (left, right):
                return "causal"
            # ``mask = mask + bias``: the name's other values decide, a finite bias added
            return "cycle" if "cycle" in (left, right) else "finite"
        return "unknown"

    def _call(self, node: ast.Call, scope: Scope, depth: int, seen: frozenset[object]) -> Kind:
        func = node.func
        last = callee_name(func)
        receiver = func.value if isinstance(func, ast.Attribute) else None
        if last in KEEPING and receiver is not None:
            return self._kind(receiver, scope, depth - 1, seen)
        if last in ("logical_or", "logical_and"):
            # attended where either is (both are): a causal mask or'ed with any other keeps
            # the diagonal; and'ed, only with another that keeps it
            operands = list(node.args) if len(node.args) == 2 else [receiver, *node.args] if (
                receiver is not None and len(node.args) == 1) else []
            return self._combined(ast.BitOr() if last == "logical_or" else ast.BitAnd(),
                                  operands, scope, depth, seen) if operands else "unknown"
        if last == "where":
            # ``torch.where(keep, 0, finfo.min)``, ``bias.where(keep, other)``: either value
            # at each entry; finite where both are
            values = node.args[1:3] if receiver is None or self._of_a_package(func) else (
                [receiver, *node.args[1:2]])
            kinds = [self._kind(value, scope, depth - 1, seen) for value in values]
            return "finite" if len(kinds) == 2 and all(
                kind in ("finite", "cycle") for kind in kinds) and "finite" in kinds \
                else "unknown"
        if last == "eye":
            return "causal"  # the diagonal attended (or 0/1 added: finite either way)
        if last in FILLS or last == "fill_":
            fill = node.args[0] if last == "fill_" and node.args else node.args[1] if len(
                node.args) >= 2 else keyword(node, "fill_value")
            return filled(fill)
        if last in ZEROS:
            return "finite"
        if last in ONES:
            return "ones"
        if last in ("masked_fill", "masked_fill_") and receiver is not None:
            value = node.args[1] if len(node.args) >= 2 else keyword(node, "value")
            base = self._kind(receiver, scope, depth - 1, seen)
            return base if base in ("finite", "cycle") and value is not None and \
                finite_number(value) else "unknown"
        if last in ("tril", "tril_", "triu", "triu_"):
            tensor = receiver if receiver is not None and not (
                isinstance(receiver, ast.Name) and receiver.id == "torch") else (
                node.args[0] if node.args else None)
            kind = self._kind(tensor, scope, depth - 1, seen)
            if kind in ("finite", "cycle"):
                # Part of a finite bias zeroed is still finite; ``mask = triu(mask)`` is
                # decided by the name's other values.
                return kind
            # SDPA's masks: True (or 0 added) attends. The lower triangle of all-attended, or
            # -inf above the diagonal, keeps each row's own key.
            wanted = "ones" if last.startswith("tril") else "ninf"
            return "causal" if kind == wanted and keeps_diagonal(node, last.rstrip("_")) \
                else "unknown"
        if last == "generate_square_subsequent_mask":
            return "causal"
        called = self._function_called(func)
        return "unknown" if called is None else self._returned(called, depth, seen)

    def _returned(self, name: str, depth: int, seen: frozenset[object],
                  element: Element | None = None) -> Kind:
        """What every function of the file of that name returns; or one ``element`` of the
        tuples they return, where ``x, mask = build(...)`` unpacks them."""
        functions = self._functions.get(name)
        key = ("returns", name) if element is None else ("returns", name, element.index)
        if not functions or key in seen:
            return "unknown"
        inner = seen | {key}
        kinds: list[Kind] = []
        for function in functions:
            found = list(returned(function))
            values = found if element is None else [element.of(value) for value in found]
            if not values or None in values:
                return "unknown"  # returns nothing, or not such a tuple
            kinds += [self._kind(value, id(function), depth - 1, inner) for value in values]
        return join(*kinds)

    def _positions_compared(self, node: ast.Compare, scope: Scope, depth: int) -> bool:
        """``q_pos[:, None] >= k_pos[None, :]``: a causal mask read as positions compared, the
        equal ones attended (``>=``/``<=``), each side positions from ``arange``."""
        if len(node.ops) != 1 or not isinstance(node.ops[0], ast.GtE | ast.LtE):
            return False
        return all(self._positions(side, scope, depth)
                   for side in (node.left, node.comparators[0]))

    def _positions(self, node: ast.expr, scope: Scope, depth: int) -> bool:
        """An ``arange`` of positions, viewed, indexed or shifted by a number of them."""
        self._left -= 1
        if depth <= 0 or self._left < 0:
            return False
        if isinstance(node, ast.Subscript):
            return self._positions(node.value, scope, depth - 1)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Sub):
            return self._positions(node.left, scope, depth - 1)
        if isinstance(node, ast.Call):
            func = node.func
            last = callee_name(func)
            if last == "arange":
                return True
            return last in KEEPING and isinstance(func, ast.Attribute) and \
                self._positions(func.value, scope, depth - 1)
        if isinstance(node, ast.Name) and node.id not in self._parameters.get(scope, {}):
            values = self._local.get((scope, node.id), [])
            return bool(values) and all(value is not None and
                                        self._positions(value, scope, depth - 1)
                                        for value, _ in values)
        return False


class Element(ast.expr):
    """Element ``index`` of the ``size``-tuple a call returns, unpacked (``a, m = f(x)``)."""

    _fields = ("call",)

    def __init__(self, call: ast.Call, index: int, size: int) -> None:
        super().__init__()
        self.call, self.index, self.size = call, index, size

    def of(self, value: ast.expr) -> ast.expr | None:
        """This element of a returned tuple of the right size; None for any other value."""
        if not isinstance(value, ast.Tuple) or len(value.elts) != self.size or any(
                isinstance(element, ast.Starred) for element in value.elts):
            return None
        return value.elts[self.index]


class Stored(ast.expr):
    """A mask some of whose entries a statement replaces (``mask[..., i:] = value``):
    ``base`` the mask before it (read at that statement), ``value`` what is written."""

    _fields = ("base", "value")

    def __init__(self, base: ast.expr, value: ast.expr | None) -> None:
        super().__init__()
        self.base, self.value = base, value


class Forced(ast.expr):
    """A mask whose diagonal a statement sets attended (``allowed[:, idx, idx] = True``),
    ``index`` the positions written twice: each row keeps its own key."""

    _fields = ()

    def __init__(self, index: ast.expr) -> None:
        super().__init__()
        self.index = index


def nulled_by(statement: ast.stmt) -> str | None:
    """The name a statement leaves None for what follows it: ``if mask is not None:`` whose
    body always leaves (ends in ``raise`` or ``return``; an ``else`` assigning the name is
    an assignment after it), or ``assert mask is None``; None for any other statement."""
    if isinstance(statement, ast.If) and isinstance(
            statement.body[-1], ast.Raise | ast.Return):
        return compared_with_none(statement.test, ast.IsNot)
    if isinstance(statement, ast.Assert):
        return compared_with_none(statement.test, ast.Is)
    return None


def compared_with_none(test: ast.expr, operator: type[ast.cmpop]) -> str | None:
    """``name is None`` (``operator`` Is) or ``name is not None`` (IsNot): the name."""
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(
            test.ops[0], operator) and isinstance(test.left, ast.Name) and isinstance(
            test.comparators[0], ast.Constant) and test.comparators[0].value is None:
        return test.left.id
    return None


def unpacked(value: ast.expr | None, index: int, size: int) -> ast.expr | None:
    """What element ``index`` of a ``size``-name unpacking gets: that element of a tuple
    written out, the call's element of what it returns, else unknown."""
    if isinstance(value, ast.Tuple | ast.List) and len(value.elts) == size and not any(
            isinstance(element, ast.Starred) for element in value.elts):
        return value.elts[index]
    return Element(value, index, size) if isinstance(value, ast.Call) else None


def diagonal_forced(statement: ast.stmt) -> tuple[str, ast.expr] | None:
    """``allowed[:, idx, idx] = True``: the name whose last two dimensions' diagonal is set
    attended (boolean True), and the index written twice; None for any other statement."""
    if not isinstance(statement, ast.Assign) or len(statement.targets) != 1:
        return None
    target, value = statement.targets[0], statement.value
    if not (isinstance(value, ast.Constant) and value.value is True):
        return None
    if not (isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name) and
            isinstance(target.slice, ast.Tuple) and len(target.slice.elts) >= 2):
        return None
    row, column = target.slice.elts[-2:]
    if isinstance(row, ast.Slice) or ast.dump(row) != ast.dump(column):
        return None
    return target.value.id, row


def join(*kinds: Kind) -> Kind:
    """What a value that may be any of ``kinds`` is: unknown if any is, or if any masks every
    row (a cycle adds none)."""
    kinds = tuple(kind for kind in kinds if kind != "cycle")
    if not kinds or "unknown" in kinds or "ninf" in kinds:
        return "unknown" if len(kinds) != 1 or kinds[0] != "ninf" else "ninf"
    for kind in ("causal", "finite", "ones"):
        if kind in kinds:
            return kind
    return "none"


def filled(value: ast.expr | None) -> Kind:
    """A tensor filled with ``value``: finite, all attended (True), all -inf, or unknown."""
    if value is None:
        return "unknown"
    if isinstance(value, ast.Constant) and value.value is True:
        return "ones"
    if finite_number(value):
        return "finite"
    return "ninf" if negative_infinity(value) else "unknown"


def negative_infinity(node: ast.expr) -> bool:
    """``float("-inf")``, ``-float("inf")``, ``-math.inf``, ``-torch.inf``, ``-np.inf``."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = node.operand
        return (isinstance(inner, ast.Attribute) and inner.attr == "inf") or (
            isinstance(inner, ast.Call) and isinstance(inner.func, ast.Name) and
            inner.func.id == "float" and len(inner.args) == 1 and
            isinstance(inner.args[0], ast.Constant) and
            str(inner.args[0].value).strip().lower() in ("inf", "infinity"))
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
        node.func.id == "float" and len(node.args) == 1 and \
        isinstance(node.args[0], ast.Constant) and \
        str(node.args[0].value).replace(" ", "").lower() in ("-inf", "-infinity")


def attribute_of_self(node: ast.expr) -> str | None:
    """``x`` of ``self.x``."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and \
            node.value.id in ("self", "cls"):
        return node.attr
    return None


def returned(function: Function) -> Iterator[ast.expr]:
    """The values a function returns (not those of functions inside it)."""
    pending: list[ast.AST] = list(function.body)
    while pending:
        node = pending.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda):
            continue
        if isinstance(node, ast.Return):
            yield node.value if node.value is not None else ast.Constant(None)
        pending.extend(ast.iter_child_nodes(node))


def keyword(node: ast.Call, name: str) -> ast.expr | None:
    return next((item.value for item in node.keywords if item.arg == name), None)


def finite_number(node: ast.expr) -> bool:
    """A finite numeric constant: ``-1e4``, ``-10000.0``, ``float("-1e9")``,
    ``torch.finfo(dtype).min`` (not ``float("-inf")``, ``-math.inf``, ``torch.inf``)."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        return finite_number(node.operand)
    if isinstance(node, ast.Constant):
        return isinstance(node.value, int | float) and not isinstance(node.value, bool) and \
            math.isfinite(node.value)
    if isinstance(node, ast.Attribute):
        called = node.value.func if isinstance(node.value, ast.Call) else None
        return node.attr in ("min", "max") and (
            (isinstance(called, ast.Attribute) and called.attr == "finfo")
            or (isinstance(called, ast.Name) and called.id == "finfo"))
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
            node.func.id == "float" and len(node.args) == 1 and \
            isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
        if node.args[0].value.strip().lstrip("+-").lower() in INFINITIES:
            return False
        try:
            return math.isfinite(float(node.args[0].value))
        except ValueError:
            return False
    return False


def keeps_diagonal(node: ast.Call, which: str) -> bool:
    """``tril(ones)`` / ``ones.tril()`` (diagonal 0 or more: each row keeps its own key, as
    attended positions) or ``triu(x, diagonal=1)`` and more (the masked part above it)."""
    on_tensor = isinstance(node.func, ast.Attribute) and not (
        isinstance(node.func.value, ast.Name) and node.func.value.id == "torch")
    arguments = node.args if on_tensor else node.args[1:]
    diagonal = arguments[0] if arguments else keyword(node, "diagonal")
    value = 0 if diagonal is None else constant_int(diagonal)
    if value is None:
        return False
    return value >= 0 if which == "tril" else value >= 1


def constant_int(node: ast.expr) -> int | None:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = constant_int(node.operand)
        return None if inner is None else -inner
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    return None
