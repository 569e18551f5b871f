"""Calculations a memory writes out: one that does not add up is a claim nobody made.

"so the anion gap is 145 - 100 = 21" (fresh33's truth-1162) was the model's retelling of the chatbot's
"145 - (100 + 24) = 21": every number had been said, so the word checks passed it. Only a sum written in
full is checked (numbers, + - x × * / ÷ and brackets, then "=" and a number, "%" allowed after it);
anything with units or words inside is left alone. Pure.
"""

from __future__ import annotations

import ast
import operator
import re
from collections.abc import Callable

from memory.gate_terms import GateReason, GateVerdict

_NUMBER = r"\d+(?:,\d{3})*(?:\.\d+)?"
_OPERATOR = r"[-+x×*/÷−–]"
_OPERAND = rf"(?:\(\s*)*{_NUMBER}(?:\s*\))*"
_SUM = re.compile(rf"(?<!\w)(?<!\d\.)({_OPERAND}(?:\s*{_OPERATOR}\s*{_OPERAND})+)\s*=\s*({_NUMBER})(\s*%)?(?!\w|\.\d)")
_SYMBOLS = str.maketrans({"x": "*", "×": "*", "÷": "/", "−": "-", "–": "-", ",": ""})
_APPLY: dict[type, Callable[[float, float], float]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
}
TOLERANCE = 0.02  # rounding: "22/7 = 3.14", "1/3 = 0.33"


def miscalculated(text: str) -> GateVerdict | None:
    """A verdict refusing ``text`` when a sum it writes out does not come to the number it gives."""
    wrong = [found.group(0).strip() for found in _SUM.finditer(text) if not _adds_up(found)]
    if not wrong:
        return None
    return GateVerdict(
        ok=False,
        reason=GateReason.UNSAID,
        detail=f"a calculation that does not add up: {wrong[0]!r}",
        unsupported=wrong,
    )


def _adds_up(found: re.Match[str]) -> bool:
    value = _value(found.group(1).translate(_SYMBOLS))
    if value is None:
        return True  # not a sum this can read: nothing to say about it
    stated = float(found.group(2).replace(",", ""))
    if found.group(3):
        value *= 100
    decimals = len(found.group(2).partition(".")[2])
    return bool(abs(value - stated) <= max(TOLERANCE * abs(value), 0.5 * 10.0**-decimals))


def _value(expression: str) -> float | None:
    try:
        tree = ast.parse(expression.strip(), mode="eval").body
        return _evaluate(tree)
    except (SyntaxError, ValueError, ZeroDivisionError):
        return None


def _evaluate(node: ast.expr) -> float:
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
        return float(node.value)
    if isinstance(node, ast.BinOp) and type(node.op) in _APPLY:
        return _APPLY[type(node.op)](_evaluate(node.left), _evaluate(node.right))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_evaluate(node.operand)
    raise ValueError("not a plain sum")
