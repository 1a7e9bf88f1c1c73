"""to_char(number, format) and to_number(text, format) as PostgreSQL 15 computes them
(formatting.c: NUMDesc_prepare, NUM_processor), in the C locale (decimal point '.', group
separator ',', currency symbol ' ', signs '+' / '-').

to_char(x, fmt): x is printed as int8out / numeric_out of round(x, <digits after the format's
decimal point>) (x * 10^V first), its digits laid into the format's 9 / 0 / . / D / , / G
positions, '#' everywhere when x has more integer digits than the format. to_number reads the
digits, decimal point and sign the format describes, skipping one input character per other
format character. RN (roman numerals) and EEEE (scientific notation) are 0A000.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Context, Decimal, InvalidOperation, localcontext

from sql.errors import FEATURE_NOT_SUPPORTED, SqlError

_SYNTAX = "42601"
_INVALID_TEXT = "22P02"
_OVERFLOW = "22003"
_CONTEXT = Context(prec=1100, rounding=ROUND_HALF_UP)

# NUM_keywords (longest first within one initial), id = upper-case name except th / rn
_KEYWORDS = [",", ".", "0", "9", "B", "C", "D", "EEEE", "FM", "G", "L", "MI", "PL", "PR", "RN", "SG", "SP", "S", "TH", "V",
             "b", "c", "d", "eeee", "fm", "g", "l", "mi", "pl", "pr", "rn", "sg", "sp", "s", "th", "v"]


@dataclass(frozen=True)
class _Node:
    key: str | None  # keyword id (None: a literal character)
    text: str = ""


@dataclass
class NumDesc:
    """NUMDesc: digit counts and flags of a number format."""
    pre: int = 0
    post: int = 0
    lsign: str | None = None  # "pre" / "post"
    pre_lsign_num: int = 0
    multi: int = 0
    zero_start: int = 0
    zero_end: int = 0
    flags: set[str] = field(default_factory=set)



def quoted_text(fmt: str, i: int) -> tuple[list[str], int]:
    """The characters of the double-quoted literal text starting at fmt[i] (a `"`) of a
    formatting template (`\\` escapes the next character), and the index after it."""
    out: list[str] = []
    i += 1
    while i < len(fmt):
        if fmt[i] == '"':
            return out, i + 1
        if fmt[i] == "\\" and i + 1 < len(fmt):
            i += 1
        out.append(fmt[i])
        i += 1
    return out, i

def _err(msg: str, code: str = _SYNTAX) -> SqlError:
    return SqlError(code, msg)


def parse(fmt: str) -> tuple[list[_Node], NumDesc]:
    """parse_format + NUMDesc_prepare."""
    nodes: list[_Node] = []
    num = NumDesc()
    i = 0
    while i < len(fmt):
        kw = next((k for k in _KEYWORDS if fmt.startswith(k, i)), None)
        if kw is not None:
            kid = kw if kw in ("th", "rn") else kw.upper()
            _prepare(num, kid)
            nodes.append(_Node(kid))
            i += len(kw)
            continue
        if fmt[i] == '"':
            chars, i = quoted_text(fmt, i)
            nodes += [_Node(None, c) for c in chars]
            continue
        if fmt[i] == "\\" and i + 1 < len(fmt) and fmt[i + 1] == '"':
            i += 1
        nodes.append(_Node(None, fmt[i]))
        i += 1
    return nodes, num


def _prepare(num: NumDesc, kid: str) -> None:
    f = num.flags
    if "EEEE" in f and kid != "EEEE":
        raise _err('"EEEE" must be the last pattern used')
    match kid:
        case "9" | "0":
            if "BRACKET" in f:
                raise _err(f'"{kid}" must be ahead of "PR"')
            if kid == "9" and "MULTI" in f:
                num.multi += 1  # a digit of the multiplier, not of the number (NUMDesc_prepare)
                return
            if kid == "0" and "ZERO" not in f and "DECIMAL" not in f:
                f.add("ZERO")
                num.zero_start = num.pre + 1
            if "DECIMAL" in f:
                num.post += 1
            else:
                num.pre += 1
            if kid == "0":
                num.zero_end = num.pre + num.post
        case "B":
            if num.pre == 0 and num.post == 0 and "ZERO" not in f:
                f.add("BLANK")
        case "D" | ".":
            if kid == "D":
                f.add("LDECIMAL")
            if "DECIMAL" in f:
                raise _err("multiple decimal points")
            if "MULTI" in f:
                raise _err('cannot use "V" and decimal point together')
            f.add("DECIMAL")
        case "FM":
            f.add("FILLMODE")
        case "S":
            if "LSIGN" in f:
                raise _err('cannot use "S" twice')
            if f & {"PLUS", "MINUS", "BRACKET"}:
                raise _err('cannot use "S" and "PL"/"MI"/"SG"/"PR" together')
            if "DECIMAL" not in f:
                num.lsign = "pre"
                num.pre_lsign_num = num.pre
                f.add("LSIGN")
            elif num.lsign is None:
                num.lsign = "post"
                f.add("LSIGN")
        case "MI" | "PL" | "SG":
            if "LSIGN" in f:
                raise _err(f'cannot use "S" and "{kid}" together')
            f.update({"MI": {"MINUS"}, "PL": {"PLUS"}, "SG": {"PLUS", "MINUS"}}[kid])
            if kid != "SG" and "DECIMAL" in f:
                f.add(f"{'MINUS' if kid == 'MI' else 'PLUS'}_POST")
        case "PR":
            if f & {"LSIGN", "PLUS", "MINUS"}:
                raise _err('cannot use "PR" and "S"/"PL"/"MI"/"SG" together')
            f.add("BRACKET")
        case "RN" | "rn":
            f.add("ROMAN")
        case "V":
            if "DECIMAL" in f:
                raise _err('cannot use "V" and decimal point together')
            f.add("MULTI")
        case "EEEE":
            if "EEEE" in f:
                raise _err('cannot use "EEEE" twice')
            if f & {"BLANK", "FILLMODE", "LSIGN", "BRACKET", "MINUS", "PLUS", "ROMAN", "MULTI"}:
                raise _err('"EEEE" is incompatible with other formats')
            f.add("EEEE")


def _unsupported(num: NumDesc) -> None:
    if "ROMAN" in num.flags:
        raise SqlError(FEATURE_NOT_SUPPORTED, "to_char / to_number with RN (roman numerals) not yet supported")
    if "EEEE" in num.flags:
        raise SqlError(FEATURE_NOT_SUPPORTED, "to_char / to_number with EEEE (scientific notation) not yet supported")


def _th(digits: str, upper: bool) -> str:
    """get_th: the ordinal suffix of the number's last digit."""
    last = digits[-1]
    if not last.isdigit():
        raise _err(f'"{digits}" is not a number', _INVALID_TEXT)
    if len(digits) > 1 and digits[-2] == "1":
        last = "0"
    s = {"1": "st", "2": "nd", "3": "rd"}.get(last, "th")
    return s.upper() if upper else s


def _numeric_out(d: Decimal) -> str:
    s = format(d, "f")
    return s[1:] if s.startswith("-") and d == 0 else s


def to_char(value: Decimal | int, fmt: str, integer: bool) -> str:
    """int4 / int8_to_char (integer) or numeric_to_char of `value`."""
    with localcontext(_CONTEXT):
        return _to_char(value, fmt, integer)


def _to_char(value: Decimal | int, fmt: str, integer: bool) -> str:
    if not fmt:
        return ""
    nodes, num = parse(fmt)
    _unsupported(num)
    if num.multi:
        value = value * 10 ** num.multi if integer else Decimal(value) * (Decimal(10) ** num.multi)
        num.pre += num.multi
    if integer:
        org = str(int(value))
    else:
        org = _numeric_out(Decimal(value).quantize(Decimal(1).scaleb(-num.post), rounding=ROUND_HALF_UP))
    sign = "+"
    if org.startswith("-"):
        sign, org = "-", org[1:]
    pre_len = org.index(".") if "." in org else len(org)
    if integer and num.post:
        org = org + "." + "0" * num.post
    out_pre_spaces = 0
    if pre_len < num.pre:
        out_pre_spaces = num.pre - pre_len
    elif pre_len > num.pre:
        s = ["#"] * (num.pre + num.post + 1)
        s[num.pre] = "."
        org = "".join(s)
    return _Proc(nodes, num, sign, org, out_pre_spaces).to_char()


class _Proc:
    """NUM_processor's to_char direction."""

    def __init__(self, nodes: list[_Node], num: NumDesc, sign: str, number: str, out_pre_spaces: int) -> None:
        self.nodes, self.num, self.sign, self.number = nodes, num, sign, number + "\0"
        self.out_pre_spaces = out_pre_spaces
        self.p = 0  # number_p
        self.out: list[str] = []
        self.num_in = False
        self.num_curr = 0
        self.last_relevant: int | None = None
        self.decimal = "."

    def f(self, flag: str) -> bool:
        return flag in self.num.flags

    def to_char(self) -> str:
        num = self.num
        if num.zero_start:
            num.zero_start -= 1
        if self.f("PLUS") or self.f("MINUS"):
            self.sign_wrote = not (self.f("PLUS") and not self.f("MINUS"))
        else:
            if self.sign != "-" and self.f("FILLMODE"):
                num.flags.discard("BRACKET")
            self.sign_wrote = self.sign == "+" and self.f("FILLMODE") and not self.f("LSIGN")
            if num.lsign == "pre" and num.pre == num.pre_lsign_num:
                num.lsign = "post"
        self.num_count = num.post + num.pre - 1
        if self.f("FILLMODE") and self.f("DECIMAL"):
            self.last_relevant = self._last_relevant_decnum()
            if self.last_relevant is not None and num.zero_end > self.out_pre_spaces:
                last_zero = min(len(self.number) - 2, num.zero_end - self.out_pre_spaces)
                if self.last_relevant < last_zero:
                    self.last_relevant = last_zero
        if not self.sign_wrote and self.out_pre_spaces == 0:
            self.num_count += 1
        for n in self.nodes:
            if n.key is None:
                self.out.append(n.text)
                continue
            match n.key:
                case "9" | "0" | "." | "D":
                    self._numpart(n.key)
                case "," | "G":
                    if self.num_in:
                        self.out.append(",")
                    elif not self.f("FILLMODE"):
                        self.out.append(" ")
                case "L":
                    self.out.append(" ")
                case "th" | "TH":
                    if self.number[0] == "#" or self.sign == "-" or self.f("DECIMAL"):
                        continue
                    self.out.append(_th(self.number[:-1], n.key == "TH"))
                case "MI":
                    if self.sign == "-":
                        self.out.append("-")
                    elif not self.f("FILLMODE"):
                        self.out.append(" ")
                case "PL":
                    if self.sign == "+":
                        self.out.append("+")
                    elif not self.f("FILLMODE"):
                        self.out.append(" ")
                case "SG":
                    self.out.append(self.sign)
                case "C" | "SP":
                    raise SqlError(FEATURE_NOT_SUPPORTED, f'number format pattern "{n.key}" not yet supported')
        return "".join(self.out).split("\0", 1)[0]

    def _last_relevant_decnum(self) -> int | None:
        s = self.number[:-1]
        if "." not in s:
            return None
        result = s.index(".")
        for j in range(result + 1, len(s)):
            if s[j] != "0":
                result = j
        return result

    def _predec_space(self) -> bool:
        return not self.f("ZERO") and self.p == 0 and self.number[0] == "0" and self.num.post != 0

    def _lr_is_dot(self) -> bool:
        return self.last_relevant is not None and self.number[self.last_relevant] == "."

    def _numpart(self, kid: str) -> None:
        num = self.num
        self.num_in = False
        if (not self.sign_wrote
                and (self.num_curr >= self.out_pre_spaces or ("ZERO" in num.flags and num.zero_start == self.num_curr))
                and (not self._predec_space() or self._lr_is_dot())):
            if self.f("LSIGN"):
                if num.lsign == "pre":
                    self.out.append(self.sign)
                    self.sign_wrote = True
            elif self.f("BRACKET"):
                self.out.append(" " if self.sign == "+" else "<")
                self.sign_wrote = True
            elif self.sign == "+":
                if not self.f("FILLMODE"):
                    self.out.append(" ")
                self.sign_wrote = True
            elif self.sign == "-":
                self.out.append("-")
                self.sign_wrote = True
        if self.num_curr < self.out_pre_spaces and (num.zero_start > self.num_curr or not self.f("ZERO")):
            if not self.f("FILLMODE"):
                self.out.append(" ")
        elif self.f("ZERO") and self.num_curr < self.out_pre_spaces and num.zero_start <= self.num_curr:
            self.out.append("0")
            self.num_in = True
        else:
            c = self.number[self.p]
            if c == ".":
                if not self._lr_is_dot() or self.f("FILLMODE"):
                    self.out.append(self.decimal)
            elif self.last_relevant is not None and self.p > self.last_relevant and kid != "0":
                pass
            elif self._predec_space():
                if not self.f("FILLMODE"):
                    self.out.append(" ")
                elif self._lr_is_dot():
                    self.out.append("0")
            else:
                self.out.append(c)  # (a NUL ends the text, as the C string does)
                self.num_in = True
            if c != "\0":
                self.p += 1
        end = self.num_count + (1 if self.out_pre_spaces else 0) + (1 if self.f("DECIMAL") else 0)
        if self.last_relevant is not None and self.last_relevant == self.p:
            end = self.num_curr
        if self.num_curr + 1 == end:
            if self.sign_wrote and self.f("BRACKET"):
                self.out.append(" " if self.sign == "+" else ">")
            elif self.f("LSIGN") and num.lsign == "post":
                self.out.append(self.sign)
        self.num_curr += 1


def to_number(text: str, fmt: str) -> Decimal | None:
    """numeric_to_number: the number `text` holds as `fmt` describes it (NULL for an empty
    format), rounded to the digits read after the point (numeric_in with that typmod)."""
    with localcontext(_CONTEXT):
        return _to_number(text, fmt)


def _to_number(text: str, fmt: str) -> Decimal | None:
    if not fmt:
        return None
    nodes, num = parse(fmt)
    _unsupported(num)
    r = _Reader(text, num)
    for n in nodes:
        if r.at_end():
            break
        r.node(n)
    digits = "".join(r.number)
    if digits.endswith("."):
        digits = digits[:-1]
    scale = r.read_post
    precision = num.pre + num.multi + scale
    try:
        v = Decimal(digits.strip())
    except InvalidOperation:
        raise _err(f'invalid input syntax for type numeric: "{digits}"', _INVALID_TEXT) from None
    v = v.quantize(Decimal(1).scaleb(-scale), rounding=ROUND_HALF_UP)
    if v != 0 and v.adjusted() + 1 > precision - scale:
        raise _err("numeric field overflow", _OVERFLOW)
    if num.multi:
        v = v * (Decimal(10) ** -num.multi)
    return v


class _Reader:
    """NUM_processor's to_number direction (NUM_numpart_from_char)."""

    def __init__(self, text: str, num: NumDesc) -> None:
        self.s, self.num = text, num
        self.i = 0
        self.number = [" "]
        self.read_pre = self.read_post = 0
        self.read_dec = False
        self.num_in = False

    def at_end(self) -> bool:
        return self.i >= len(self.s)

    def f(self, flag: str) -> bool:
        return flag in self.num.flags

    def cur(self, k: int = 0) -> str:
        return self.s[self.i + k] if self.i + k < len(self.s) else "\0"

    def amount(self, n: int) -> bool:
        return self.i <= len(self.s) - n

    def eat_non_data(self, n: int) -> None:
        while n > 0 and not self.at_end() and self.cur() not in "0123456789.,+-":
            self.i += 1
            n -= 1

    def node(self, n: _Node) -> None:
        if n.key is None:
            self.i += 1
            return
        match n.key:
            case "9" | "0" | "." | "D":
                self._numpart(n.key)
            case ",":
                if not self.num_in and self.f("FILLMODE"):
                    return
                if self.cur() != ",":
                    return
            case "G":
                if not self.num_in and self.f("FILLMODE"):
                    return
                if not (self.amount(1) and self.cur() == ","):
                    return
            case "L":
                self.eat_non_data(1)
                return
            case "th" | "TH":
                if self.number[0] == "#" or self.f("DECIMAL"):
                    return
                self.eat_non_data(2)
                return
            case "MI" | "PL":
                ch = "-" if n.key == "MI" else "+"
                if self.cur() == ch:
                    self.number[0] = ch
                else:
                    self.eat_non_data(1)
                    return
            case "SG":
                if self.cur() in "-+" and not self.at_end():
                    self.number[0] = self.cur()
                else:
                    self.eat_non_data(1)
                    return
            case "C" | "SP":
                raise SqlError(FEATURE_NOT_SUPPORTED, f'number format pattern "{n.key}" not yet supported')
            case _:
                return
        self.i += 1

    def _numpart(self, kid: str) -> None:
        if self.at_end():
            return
        if self.cur() == " ":
            self.i += 1
        if self.at_end():
            return
        if self.number[0] == " " and kid in ("0", "9") and self.read_pre + self.read_post == 0:
            if self.f("LSIGN") and self.num.lsign == "pre":
                if self.amount(1) and self.cur() in "-+":
                    self.number[0] = self.cur()
                    self.i += 1
            elif self.cur() == "-" or (self.f("BRACKET") and self.cur() == "<"):
                self.number[0] = "-"
                self.i += 1
            elif self.cur() == "+":
                self.number[0] = "+"
                self.i += 1
        if self.at_end():
            return
        isread = False
        if self.cur().isdigit() and self.cur().isascii():
            if self.read_dec and self.read_post == self.num.post:
                return
            self.number.append(self.cur())
            if self.read_dec:
                self.read_post += 1
            else:
                self.read_pre += 1
            isread = True
        elif self.f("DECIMAL") and not self.read_dec:
            if self.amount(1) and self.cur() == ".":
                self.number.append(".")
                self.read_dec = True
                isread = True
        if self.at_end():
            return
        if self.number[0] == " " and self.read_pre + self.read_post > 0:
            if self.f("LSIGN") and isread and self.i + 1 < len(self.s) and not self.cur(1).isdigit():
                tmp = self.i
                self.i += 1
                if self.amount(1) and self.cur() in "-+":
                    self.number[0] = self.cur()
                if self.number[0] == " ":
                    self.i = tmp
            elif not isread and not self.f("LSIGN") and (self.f("PLUS") or self.f("MINUS")):
                if self.cur() in "-+":
                    self.number[0] = self.cur()
