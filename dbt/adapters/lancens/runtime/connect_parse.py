"""Reading the DDL and DML the adapter applies itself when Spark runs behind Spark Connect.

A Connect client has no JVM, so Spark's parser (`runtime.jvm.parse_statement`) is out of reach, and
the server would *run* a DDL statement sent to it, not describe it. This reader covers the
statement shapes `route` hands to the engine (see `ddl.py`) with a small tokenizer that knows SQL's
quoting (backticks, strings, comments, parentheses); column types are parsed by the server's own
DDL parser (`parse_ddl`), so every type keeps Spark's spelling and meaning. Expressions (UPDATE
assignments, conditions, a CTAS query) are kept as text and run by Spark later. A statement of
another shape returns None, as from Spark's parser, and goes to Spark unchanged.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from pyspark.sql import types as T

from dbt.adapters.lancens.runtime import plans
from dbt.adapters.lancens.text.quoting import unquote

ParseDdl = Callable[[str], T.DataType]

_TOKEN = re.compile(
    r"(?P<skip>\s+|--[^\n]*|/\*.*?\*/)"
    r"|(?P<quoted>`(?:[^`]|``)*`)"
    r"|(?P<string>'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\")"
    r"|(?P<word>\w+)"
    r"|(?P<punct>.)",
    re.DOTALL,
)


@dataclass(frozen=True)
class _Token:
    kind: str  # quoted | string | word | punct
    text: str
    start: int
    end: int
    depth: int  # parentheses open before this token

    def is_word(self, *words: str) -> bool:
        return self.kind == "word" and self.text.upper() in words


class _Reader:
    """The statement's tokens with a cursor."""

    def __init__(self, statement: str) -> None:
        self.statement = statement
        self.tokens: list[_Token] = []
        depth = 0
        for match in _TOKEN.finditer(statement):
            kind = match.lastgroup or "punct"
            if kind == "skip":
                continue
            text = match.group()
            if text == ")":
                depth -= 1
            self.tokens.append(_Token(kind, text, match.start(), match.end(), depth))
            if text == "(":
                depth += 1
        self.at = 0

    @property
    def token(self) -> _Token | None:
        return self.tokens[self.at] if self.at < len(self.tokens) else None

    def accept(self, *words: str) -> bool:
        """Move past the next tokens when they are `words` (keywords, any case), else stay."""
        if self.at + len(words) > len(self.tokens):
            return False
        if not all(self.tokens[self.at + i].is_word(word) for i, word in enumerate(words)):
            return False
        self.at += len(words)
        return True

    def accept_punct(self, text: str) -> bool:
        token = self.token
        if token is not None and token.kind == "punct" and token.text == text:
            self.at += 1
            return True
        return False

    def name(self) -> list[str] | None:
        """A dotted name (`a.b`, `` `a`.`b` ``) as its parts, or None if no name is next."""
        parts: list[str] = []
        while True:
            token = self.token
            if token is None or token.kind not in ("word", "quoted"):
                return parts or None
            parts.append(unquote(token.text) if token.kind == "quoted" else token.text)
            self.at += 1
            if not self.accept_punct("."):
                return parts

    def parenthesised(self) -> str | None:
        """The text inside the parentheses that open here, the cursor moved past them."""
        opening = self.token
        if opening is None or opening.text != "(":
            return None
        for index in range(self.at + 1, len(self.tokens)):
            closing = self.tokens[index]
            if closing.text == ")" and closing.depth == opening.depth:
                self.at = index + 1
                return self.statement[opening.end : closing.start]
        return None

    def rest(self) -> str:
        token = self.token
        return self.statement[token.start :].strip() if token is not None else ""

    def top_level_word(self, word: str) -> int | None:
        """Index of the next token that is `word` outside parentheses, from the cursor on."""
        depth = self.token.depth if self.token is not None else 0
        for index in range(self.at, len(self.tokens)):
            if self.tokens[index].depth == depth and self.tokens[index].is_word(word):
                return index
        return None


def parse_statement(statement: str, parse_ddl: ParseDdl) -> plans.Statement | None:
    """What `statement` asks for when it is DDL or DML on a namespace object, else None."""
    reader = _Reader(statement)
    if reader.accept("DROP"):
        return _drop(reader)
    if reader.accept("CREATE", "OR", "REPLACE", "TABLE"):
        return _create(reader, parse_ddl, replace=True)
    if reader.accept("CREATE", "TABLE"):
        return _create(reader, parse_ddl, replace=False)
    if reader.accept("REPLACE", "TABLE"):
        return _create(reader, parse_ddl, replace=True)
    if reader.accept("TRUNCATE", "TABLE"):
        name = reader.name()
        return plans.Truncate(name) if name is not None and len(name) == 2 else None
    if reader.accept("ALTER", "TABLE"):
        return _alter(reader, parse_ddl)
    if reader.accept("ALTER", "VIEW"):
        return _alter_view(reader)
    if reader.accept("COMMENT", "ON", "TABLE"):
        name = reader.name()
        return plans.Unapplied(name, "COMMENT ON TABLE") if name is not None and len(name) == 2 else None
    if reader.accept("UPDATE"):
        return _update(reader)
    if reader.accept("DELETE", "FROM"):
        return _delete(reader)
    return None


def _drop(reader: _Reader) -> plans.Statement | None:
    if any(reader.accept(kind) for kind in ("SCHEMA", "DATABASE", "NAMESPACE")):
        if_exists = reader.accept("IF", "EXISTS")
        name = reader.name()
        if name is None or len(name) != 1:
            return None
        return plans.DropNamespace(name[0], if_exists, reader.accept("CASCADE"))
    if reader.accept("TABLE") or reader.accept("VIEW"):
        if_exists = reader.accept("IF", "EXISTS")
        name = reader.name()
        return plans.DropRelation(name, if_exists) if name is not None and len(name) == 2 else None
    return None


def _create(reader: _Reader, parse_ddl: ParseDdl, *, replace: bool) -> plans.CreateTable | None:
    if_not_exists = reader.accept("IF", "NOT", "EXISTS")
    name = reader.name()
    if name is None or len(name) != 2:
        return None
    columns = reader.parenthesised()
    provider = None
    using = reader.top_level_word("USING")
    if using is not None and using + 1 < len(reader.tokens):
        provider = reader.tokens[using + 1].text.strip("`")
    as_index = reader.top_level_word("AS")
    query_sql = None
    if as_index is not None:
        reader.at = as_index + 1
        query_sql = reader.rest()
    schema = T.StructType()
    if columns is not None and columns.strip():
        schema = T.StructType([_without_char_varchar_field(f) for f in _struct(parse_ddl(columns)).fields])
    return plans.CreateTable(
        name,
        False if replace else if_not_exists,
        provider,
        schema=schema,
        query_sql=query_sql,
        replace=replace,
    )


def _alter(reader: _Reader, parse_ddl: ParseDdl) -> plans.Statement | None:
    name = reader.name()
    if name is None or len(name) != 2:
        return None
    if reader.accept("RENAME", "TO"):
        return _rename(reader, name)
    if reader.accept("PARTITION") and reader.parenthesised() is not None and reader.accept("SET", "LOCATION"):
        return plans.Unapplied(name, "ALTER TABLE ... SET LOCATION")
    for words in _UNAPPLIED_ALTERS:
        if reader.accept(*words):
            return plans.Unapplied(name, f"ALTER TABLE ... {' '.join(words)}")
    if reader.accept("ADD", "COLUMNS") or reader.accept("ADD", "COLUMN"):
        text = reader.parenthesised() or reader.rest()
        columns = []
        for item in _split_top_level(text):
            definition, default = _split_default(item)
            field = _struct(parse_ddl(definition)).fields[0]  # a comment is not kept, as by Spark's plan
            columns.append(
                plans.AddColumn(T.StructField(field.name, _without_char_varchar(field.dataType)), default)
            )
        return plans.AddColumns(name, columns)
    if reader.accept("DROP", "COLUMNS") or reader.accept("DROP", "COLUMN"):
        if_exists = reader.accept("IF", "EXISTS")
        text = reader.parenthesised() or reader.rest()
        dropped = []
        for item in _split_top_level(text):
            parts = _Reader(item).name()
            if parts is None:
                return None
            dropped.append(".".join(parts))
        return plans.DropColumns(name, dropped, if_exists)
    if reader.accept("ALTER", "COLUMN") or reader.accept("ALTER"):
        column = reader.name()
        if column is None:
            return None
        new_type = None
        if reader.accept("TYPE"):
            new_type = _without_char_varchar(parse_ddl(reader.rest()))
        return plans.AlterColumnTypes(name, [(".".join(column), new_type)])
    return None


# What follows `ALTER TABLE s.t` in the DDL Spark would apply to its catalog mirror only.
_UNAPPLIED_ALTERS = (
    ("SET", "TBLPROPERTIES"),
    ("UNSET", "TBLPROPERTIES"),
    ("RENAME", "COLUMN"),
    ("REPLACE", "COLUMNS"),
    ("SET", "LOCATION"),
)


def _alter_view(reader: _Reader) -> plans.Statement | None:
    name = reader.name()
    if name is None or len(name) != 2:
        return None
    if reader.accept("RENAME", "TO"):
        return _rename(reader, name)
    for words in (("SET", "TBLPROPERTIES"), ("UNSET", "TBLPROPERTIES"), ("AS",)):
        if reader.accept(*words):
            return plans.Unapplied(name, f"ALTER VIEW ... {' '.join(words)}")
    return None


def _rename(reader: _Reader, name: list[str]) -> plans.RenameRelation | None:
    new_name = reader.name()
    return plans.RenameRelation(name, new_name) if new_name is not None and len(new_name) <= 2 else None


def _update(reader: _Reader) -> plans.RowLevel | None:
    name = reader.name()
    if name is None:
        return None
    alias = _alias(reader, "SET")
    if not reader.accept("SET"):
        return None
    where = reader.top_level_word("WHERE")
    end = reader.tokens[where].start if where is not None else len(reader.statement)
    start = reader.token.start if reader.token is not None else end
    assignments = []
    for item in _split_top_level(reader.statement[start:end]):
        target, equals, expression = item.partition("=")
        column = _Reader(target).name()
        if not equals or column is None:
            return None
        if alias is not None and len(column) > 1 and column[0].lower() == alias.lower():
            column = column[1:]  # `x.a` of `UPDATE t AS x`: the column a
        assignments.append((".".join(column), expression.strip()))
    condition = _condition(reader, where)
    return plans.RowLevel(name, assignments, condition, alias)


def _delete(reader: _Reader) -> plans.RowLevel | None:
    name = reader.name()
    if name is None:
        return None
    alias = _alias(reader, "WHERE")
    return plans.RowLevel(name, [], _condition(reader, reader.top_level_word("WHERE")), alias)


def _alias(reader: _Reader, next_keyword: str) -> str | None:
    """The `[AS] alias` after a DML statement's table name, if it has one (cursor moved past it)."""
    explicit = reader.accept("AS")
    token = reader.token
    if (
        token is None
        or token.kind not in ("word", "quoted")
        or (not explicit and token.is_word(next_keyword))
    ):
        return None
    parts = reader.name()
    return parts[0] if parts is not None and len(parts) == 1 else None


def _condition(reader: _Reader, where: int | None) -> str:
    if where is None:
        return "true"
    reader.at = where + 1
    return reader.rest() or "true"


def _split_top_level(text: str) -> list[str]:
    """`text` split at the commas outside parentheses, brackets, strings and quoted names."""
    items, start = [], 0
    for token in _Reader(text).tokens:
        if token.text == "," and token.depth == 0 and not _inside_angle(text[start : token.start]):
            items.append(text[start : token.start].strip())
            start = token.end
    items.append(text[start:].strip())
    return [item for item in items if item]


def _inside_angle(text: str) -> bool:
    """True inside an unclosed `<` of a type (`map<string, int>` has a comma of its own)."""
    return text.count("<") > text.count(">")


def _split_default(item: str) -> tuple[str, str | None]:
    """A column definition and the SQL of its DEFAULT, if it has one."""
    reader = _Reader(item)
    default = reader.top_level_word("DEFAULT")
    if default is None:
        return item, None
    token = reader.tokens[default]
    return item[: token.start].strip(), item[token.end :].strip()


def _struct(data_type: T.DataType) -> T.StructType:
    if not isinstance(data_type, T.StructType) or not data_type.fields:
        raise ValueError(f"expected column definitions, the server's parser read {data_type.simpleString()}")
    return data_type


def _without_char_varchar(data_type: T.DataType) -> T.DataType:
    """CHAR(n)/VARCHAR(n) as strings (as Spark's own readers, and `runtime.jvm`, treat them)."""
    if isinstance(data_type, (T.CharType, T.VarcharType)):
        return T.StringType()
    if isinstance(data_type, T.StructType):
        return T.StructType([_without_char_varchar_field(field) for field in data_type.fields])
    if isinstance(data_type, T.ArrayType):
        return T.ArrayType(_without_char_varchar(data_type.elementType), data_type.containsNull)
    if isinstance(data_type, T.MapType):
        return T.MapType(
            _without_char_varchar(data_type.keyType),
            _without_char_varchar(data_type.valueType),
            data_type.valueContainsNull,
        )
    return data_type


def _without_char_varchar_field(field: T.StructField) -> T.StructField:
    return T.StructField(field.name, _without_char_varchar(field.dataType), field.nullable, field.metadata)


def two_part_names(statement: str) -> list[tuple[str, str]]:
    """Every `a.b` the statement spells (relations, and column references alike), in order, once.

    Through Spark Connect the server's catalog is shared by all its sessions, so a relation name may
    already be there, registered by another client with a `lance` source this session does not
    have; the runtime registers each name it reads here in its own session first."""
    reader = _Reader(statement)
    names: list[tuple[str, str]] = []
    while reader.token is not None:
        previous = reader.tokens[reader.at - 1] if reader.at > 0 else None
        start = reader.at
        parts = reader.name() if previous is None or previous.text != "." else None
        if parts is None:
            reader.at = max(reader.at, start + 1)
            continue
        if len(parts) == 2 and (parts[0], parts[1]) not in names:
            names.append((parts[0], parts[1]))
    return names
